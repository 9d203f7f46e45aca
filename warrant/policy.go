package warrant

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// PolicyJSON is the policy file this kernel evaluates under, as shipped.
//
//go:embed policy.json
var PolicyJSON []byte

// policyFile is the shape of policy.json.
type policyFile struct {
	Protocol      string `json:"protocol"`
	PolicyID      string `json:"policy_id"`
	PolicyVersion string `json:"policy_version"`
	Methods       struct {
		Human, External, Indirect []string
	} `json:"methods"`
	Origins struct {
		Trusted, Endogenous []string
	} `json:"origins"`
}

var policy = mustPolicy(PolicyJSON)

// mustPolicy parses the embedded policy. A malformed file is a build
// defect, caught by the first test run, so it panics at start-up.
func mustPolicy(b []byte) policyFile {
	var p policyFile
	if err := json.Unmarshal(b, &p); err != nil {
		panic(fmt.Sprintf("warrant: embedded policy.json: %v", err))
	}
	if p.Protocol != ProtocolVersion || p.PolicyID != PolicyID || p.PolicyVersion != PolicyVersion {
		panic("warrant: embedded policy.json names another protocol or policy")
	}
	return p
}
