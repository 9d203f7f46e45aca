// Package mcp serves the Epistemic Warrant Protocol over MCP.
package mcp

import (
	_ "github.com/mark3labs/mcp-go/client"
	_ "github.com/mark3labs/mcp-go/server"
)
