package mcp

import "github.com/ewp-go/ewp/gate"

// An action's arguments are recorded twice in its decision: by hash
// (arguments_hash, over the whole canonical arguments: what an approval
// binds) and as text for whoever answers it (arguments), bounded and
// redacted (ewp-mcp --redact-arguments). The gate records them; see
// gate.DefaultRedactedArguments.

// DefaultRedactedArguments are the member names redacted when the
// operator names none (gate.DefaultRedactedArguments).
var DefaultRedactedArguments = gate.DefaultRedactedArguments

// RedactedMarker replaces a redacted member's value.
const RedactedMarker = gate.RedactedMarker

// MaxRecordedArgumentsBytes bounds the recorded arguments' JSON text
// (gate.MaxRecordedArgumentsBytes).
const MaxRecordedArgumentsBytes = gate.MaxRecordedArgumentsBytes
