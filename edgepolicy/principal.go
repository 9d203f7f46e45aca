package edgepolicy

import "github.com/cedar-policy/cedar-go"

// Entity types of the principal: Agent::"NAME" with its groups as
// parents Group::"G", so `principal in Group::"ops"` holds for the ops
// group's members and no one else.
const (
	AgentType = cedar.EntityType("Agent")
	GroupType = cedar.EntityType("Group")
)

// Principal is the Cedar principal of an agent (name "" is "anonymous")
// and the entities a policy needs to see its groups. Only the agent
// entity is given: a group has no parents of its own, so groups do not
// nest.
type Principal struct {
	UID    cedar.EntityUID
	entity cedar.Entity
}

// NewPrincipal builds Agent::"name" with Group::"g" parents for groups.
func NewPrincipal(name string, groups []string) Principal {
	if name == "" {
		name = defaultAgent
	}
	uid := cedar.NewEntityUID(AgentType, cedar.String(name))
	parents := make([]cedar.EntityUID, len(groups))
	for i, g := range groups {
		parents[i] = cedar.NewEntityUID(GroupType, cedar.String(g))
	}
	return Principal{UID: uid, entity: cedar.Entity{UID: uid, Parents: cedar.NewEntityUIDSet(parents...)}}
}

// Get is cedar.EntityGetter over the principal alone: Cedar asks it for
// the principal's parents when a policy says `principal in …`.
func (p Principal) Get(uid cedar.EntityUID) (cedar.Entity, bool) {
	if uid == p.UID {
		return p.entity, true
	}
	return cedar.Entity{}, false
}
