// Command shop is the harness's stand-in for an MCP server that acts on the world: a stdio MCP
// server (the go-sdk) whose tools send_email and create_refund are external effects by
// agent-rewind's built-in mcp-outbound rule, and get_order, which is not. Each call of an
// effect tool appends one JSON line to the file named by --log (outside the project, so no
// rewind touches it): the harness counts there how many times an effect really ran, which is
// what the guard's refusal of a repeat must keep at one.
//
//	shop --log /tmp/shop.jsonl
package main
