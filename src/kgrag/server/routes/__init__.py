"""One router per concern; :func:`kgrag.server.app.create_app` mounts them all."""
