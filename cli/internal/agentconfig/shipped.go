package agentconfig

import "fmt"

//go:generate go run gen_shipped.go

// shippedFile returns a file of integrations/ as this binary carries it (shipped_gen.go).
func shippedFile(rel string) (string, error) {
	s, ok := shipped[rel]
	if !ok {
		return "", fmt.Errorf("integrations/%s is not among the integration files this build carries (go generate ./cli/internal/agentconfig)", rel)
	}
	return s, nil
}
