"""The HTTP routes, one router per resource; :data:`kgrag.server.app.ROUTERS` lists them, in order."""
