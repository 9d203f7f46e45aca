package conformance

import "github.com/ewp-go/ewp/warrant"

const (
	warrantProtocol = warrant.ProtocolVersion
	warrantPolicy   = warrant.PolicyID
)
