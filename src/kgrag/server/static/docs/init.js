// Starts Swagger UI on the page's schema; a file of its own, since the page allows no inline script.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: document.body.dataset.spec,
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null, // no badge fetched from validator.swagger.io
  });
});
