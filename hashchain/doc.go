// Package hashchain is agent-rewind's tamper-evident log.
package hashchain
