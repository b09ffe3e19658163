"""Who may call the server, and what a client may read.

auth.py      Principal (a caller and its workspaces), API keys, the Authenticator
accounts.py  the accounts file (argon2 password hashes, workspaces per user)
tokens.py    account tokens (HS256 JWTs, with an expiry)
throttle.py  login throttling, counted in the default workspace's store
gate.py      the middleware in front of every route: 401 and 403
security.py  security headers, body limits, CORS options, plain refusals
redact.py    text a client may read: no model endpoint's address, no server path
"""
