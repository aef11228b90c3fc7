"""The MCP server: the collections as tools, resources and a prompt for any MCP client."""
