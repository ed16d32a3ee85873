"""Coach's domain: plain Python, no Flask, no SQLAlchemy session, no Socket.IO."""
