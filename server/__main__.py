"""`python -m server`: run the MAPLE MCP server on stdio."""

from server.app import main

if __name__ == "__main__":
    main()
