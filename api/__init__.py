"""REST (flask-smorest blueprints) and Socket.IO handlers. Thin: parse, authorise, call a service, serialise."""
