"""``contextls mcp``'s parts: the early ``initialize`` answer, the daemon link, the tools.

``contextls_client.mcp_server`` is the entry point; nothing here is imported
before the host's ``initialize`` has been answered, except ``handshake``.
"""
