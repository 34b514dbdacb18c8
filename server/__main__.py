"""`python -m server`: run the MAPLE MCP server on stdio."""

from server.launch import (
    main,  # stdlib only: the SDK loads after the handshake is answered
)

if __name__ == "__main__":
    main()
