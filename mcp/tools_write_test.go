package mcp

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/ewp-go/ewp/warrant"
)

// A valid call of every write tool, for the role tests.
func writeCalls() map[string]obj {
	return map[string]obj{
		"evidence_view_put": {"view": view("P-new", "v-new-1", nil)},
		"evidence_record": {"proposition_id": "P-tentative", "evidence_id": "e9", "polarity": "supports",
			"content": "x", "source": obj{"content_hash": "h", "observed_at": "2026-09-02"}},
		"check_record": {"proposition_id": "P-tentative", "check_id": "k9", "method": "inference", "scope": "x",
			"result": "supports", "source": obj{"content_hash": "h", "observed_at": "2026-09-02"}},
	}
}

func TestWritesNeedIngestRole(t *testing.T) {
	eachTransport(t, false, func(t *testing.T, c *client.Client, st *fakeStore) {
		for tool, args := range writeCalls() {
			msg := mustRefuse(t, call(t, c, tool, args), warrant.CodeIngestRole)
			if !strings.Contains(msg, "ingest role") {
				t.Errorf("%s: unhelpful message %q", tool, msg)
			}
			// The role is checked before the payload: garbage gets the same answer.
			for _, junk := range []any{obj{"view": 1, "evidence_id": []any{}}, obj{"warrant": obj{}}, obj{}} {
				mustRefuse(t, call(t, c, tool, junk), warrant.CodeIngestRole)
			}
		}
		if st.count("P-new") != 0 || st.count("P-tentative") != 1 {
			t.Fatal("a refused write changed the ledger")
		}
	})
	eachTransport(t, true, func(t *testing.T, c *client.Client, st *fakeStore) {
		for tool, args := range writeCalls() {
			mustOK(t, call(t, c, tool, args))
		}
		if st.count("P-new") != 1 || st.count("P-tentative") != 3 {
			t.Fatal("writes with the role did not land")
		}
	})
}

func TestHTTPIngestCredentials(t *testing.T) {
	srv, _ := newTestServer(t)
	ts := httpTestServer(t, srv)
	dial := func(headers map[string]string) *client.Client {
		c, err := client.NewStreamableHttpClient(ts.URL+EndpointPath, transport.WithHTTPHeaders(headers))
		if err != nil {
			t.Fatal(err)
		}
		return start(t, c)
	}
	args := writeCalls()["evidence_view_put"]
	for _, h := range []map[string]string{{"X-EWP-Ingest-Token": testToken}, {"Authorization": "bearer " + testToken}} {
		mustOK(t, call(t, dial(h), "evidence_view_put", args))
	}
	cases := map[string]map[string]string{
		"does not match":        {"Authorization": "Bearer wrong"},
		"Authorization: Bearer": {},
		"X-EWP-Ingest-Token":    {"Authorization": "Basic " + testToken},
	}
	for want, h := range cases {
		msg := mustRefuse(t, call(t, dial(h), "evidence_view_put", args), warrant.CodeIngestRole)
		if !strings.Contains(msg, want) {
			t.Errorf("headers %v: message %q should mention %q", h, msg, want)
		}
	}
}

func TestHTTPWithoutTokenIsEvaluateOnly(t *testing.T) {
	srv, _ := newTestServer(t)
	h, err := srv.HTTPHandler(HTTPConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "/mcp", nil)
	req.Header.Set("Authorization", "Bearer anything")
	f := h.(*httpFront)
	id, err := f.auth.Authenticate(req)
	if r := f.roleOf(id); err != nil || r.ingest || !strings.Contains(r.why, "without an ingest token") {
		t.Fatalf("role %+v, %v", r, err)
	}
}

func TestEvidenceViewPut(t *testing.T) {
	eachTransport(t, true, func(t *testing.T, c *client.Client, st *fakeStore) {
		v := view("P-new", "v-new-1", nil)
		out := mustOK(t, call(t, c, "evidence_view_put", obj{"view": v}))
		if out["stored"] != true || out["view_id"] != "v-new-1" || out["proposition_id"] != "P-new" {
			t.Fatalf("%v", out)
		}
		if again := mustOK(t, call(t, c, "evidence_view_put", obj{"view": v})); again["stored"] != false {
			t.Fatalf("identical re-put must be a no-op: %v", again)
		}
		changed := view("P-new", "v-new-1", obj{"degraded": true})
		mustRefuse(t, call(t, c, "evidence_view_put", obj{"view": changed}), warrant.CodeImmutableRecord)

		derived := view("P-new", "", obj{"degraded": true})
		out = mustOK(t, call(t, c, "evidence_view_put", obj{"view": derived}))
		if id := out["view_id"].(string); !strings.HasPrefix(id, "v-") || len(id) != 22 {
			t.Fatalf("derived view id %q", id)
		}
		if st.count("P-new") != 2 {
			t.Fatal("snapshots not stored")
		}
	})
}

func TestEvidenceViewPutRefusals(t *testing.T) {
	srv, st := newTestServer(t)
	c := dialInProcess(t, srv)
	ctx := withRole(context.Background(), role{ingest: true})
	wv := obj{"protocol_version": "EWP-0.2.0", "proposition_id": "P-w", "view_id": "v", "warrant": obj{"acceptance": "ACCEPTED"}}
	trusted := seedViews()[0]
	trusted["proposition_id"], trusted["view_id"] = "P-trusted", "v-t"
	cases := []struct {
		args obj
		code string
	}{
		{obj{"view": wv}, warrant.CodePersistWarrant},
		{wv, warrant.CodePersistWarrant},
		{obj{"view": trusted}, warrant.CodeUnattestedTrusted},
		{obj{"view": trusted, "ingest_attestation": false}, warrant.CodeUnattestedTrusted},
		{obj{"view": trusted, "ingest_attestation": "true"}, warrant.CodeUnattestedTrusted},
		{obj{"view": trusted, "ingest_attestation": 1}, warrant.CodeUnattestedTrusted},
		{obj{"view": view("P-x", "v", obj{"checks": []any{check("k", "m", "maybe", "turn", testT)}})}, warrant.CodeInvalidView},
		{obj{"view": []any{}}, warrant.CodeInvalidView},
		{obj{}, CodeInvalidArgument},
		{obj{"view": view("P-x", "v", nil), "extra": 1}, CodeInvalidArgument},
	}
	for _, tc := range cases {
		mustRefuse(t, callCtx(ctx, t, c, "evidence_view_put", tc.args), tc.code)
	}
	if st.count("P-trusted") != 0 || st.count("P-w") != 0 {
		t.Fatal("a refused put was stored")
	}
	mustOK(t, callCtx(ctx, t, c, "evidence_view_put", obj{"view": trusted, "ingest_attestation": true}))
}

func TestEvidenceRecord(t *testing.T) {
	eachTransport(t, true, func(t *testing.T, c *client.Client, st *fakeStore) {
		out := mustOK(t, call(t, c, "evidence_record", obj{"proposition_id": "P-empty", "evidence_id": "e1",
			"polarity": "supports", "content": "saw it", "assertion_text": "it holds",
			"source": obj{"content_hash": "sha256:abc", "observed_at": "2026-09-10T00:00:00Z"}}))
		if out["stored"] != true || out["evidence_id"] != "e1" || out["view_id"] == "v-empty" {
			t.Fatalf("%v", out)
		}
		got := mustOK(t, call(t, c, "evidence_view_get", obj{"proposition_id": "P-empty"}))["view"].(obj)
		ev := got["evidence"].([]any)[0].(obj)
		s := ev["source"].(obj)
		want := obj{"source_id": "e1", "lineage_id": "e1", "snapshot_id": "e1", "origin_type": "extract",
			"origin_locator": "mcp:e1", "content_hash": "sha256:abc", "observed_at": "2026-09-10T00:00:00Z"}
		for k, v := range want {
			if s[k] != v {
				t.Errorf("source.%s = %v, want %v", k, s[k], v)
			}
		}
		if ev["observed_at"] != "2026-09-10T00:00:00Z" {
			t.Errorf("record time should default to the source's: %v", ev["observed_at"])
		}
		a := got["assertions"].([]any)[0].(obj)
		if a["assertion_id"] != "a:e1" || a["text"] != "it holds" || a["asserted_by"] != "e1" {
			t.Errorf("assertion %v", a)
		}
		w := mustOK(t, call(t, c, "warrant_now", obj{"proposition_id": "P-empty", "evaluated_at": testT}))
		if axes(t, w)["acceptance"] != warrant.Tentative {
			t.Errorf("the appended evidence should count: %v", axes(t, w))
		}
	})
}

func TestCheckRecordAttested(t *testing.T) {
	eachTransport(t, true, func(t *testing.T, c *client.Client, _ *fakeStore) {
		args := obj{"proposition_id": "P-tentative", "check_id": "k-tool", "method": "tool_observation",
			"scope": "Get-ComputerInfo on server01", "result": "supports", "subjects": []any{},
			"source": obj{"origin_type": "tool", "content_hash": "sha256:x", "observed_at": "2026-09-21T20:00:00Z"}}
		mustRefuse(t, call(t, c, "check_record", args), warrant.CodeUnattestedTrusted)
		args["ingest_attestation"] = true
		out := mustOK(t, call(t, c, "check_record", args))
		if out["check_id"] != "k-tool" {
			t.Fatalf("%v", out)
		}
		w := mustOK(t, call(t, c, "warrant_now", obj{"proposition_id": "P-tentative", "evaluated_at": testT}))
		if ax := axes(t, w); ax["acceptance"] != warrant.Accepted || ax["verification"] != warrant.VerExternal {
			t.Fatalf("an attested tool check should verify: %v", ax)
		}
	})
}

func TestAppendRefusals(t *testing.T) {
	srv, _ := newTestServer(t)
	c := dialInProcess(t, srv)
	ctx := withRole(context.Background(), role{ingest: true})
	ev := func(mod obj) obj {
		a := obj{"proposition_id": "P-tentative", "evidence_id": "e9", "polarity": "supports", "content": "x",
			"source": obj{"content_hash": "h", "observed_at": "2026-09-02"}}
		for k, v := range mod {
			a[k] = v
		}
		return a
	}
	ck := func(mod obj) obj {
		a := obj{"proposition_id": "P-tentative", "check_id": "k9", "method": "inference", "scope": "x",
			"result": "supports", "source": obj{"content_hash": "h", "observed_at": "2026-09-02"}}
		for k, v := range mod {
			a[k] = v
		}
		return a
	}
	cases := []struct {
		tool string
		args obj
		code string
	}{
		{"evidence_record", ev(obj{"proposition_id": "P-nope"}), warrant.CodeMissingView},
		{"evidence_record", ev(obj{"polarity": nil}), warrant.CodeInvalidView},
		{"evidence_record", ev(obj{"polarity": "neutral"}), warrant.CodeInvalidView},
		{"evidence_record", ev(obj{"source": obj{"observed_at": "2026-09-02"}}), warrant.CodeMissingContentHash},
		{"evidence_record", ev(obj{"source": obj{"content_hash": "", "observed_at": "2026-09-02"}}), warrant.CodeMissingContentHash},
		{"evidence_record", ev(obj{"source": obj{"content_hash": "h"}}), warrant.CodeMissingObservedAt},
		{"evidence_record", ev(obj{"source": nil}), warrant.CodeMissingContentHash},
		{"evidence_record", ev(obj{"source": obj{"content_hash": "h", "observed_at": "x", "origin_type": "human"}}), warrant.CodeUnattestedTrusted},
		{"evidence_record", ev(obj{"source": obj{"content_hash": "h", "observed_at": "x", "colour": "red"}}), CodeInvalidArgument},
		{"evidence_record", ev(obj{"asserted_by": "me"}), CodeInvalidArgument},
		{"evidence_record", ev(obj{"assertion_text": "t", "assertion_confidence": "high"}), CodeInvalidArgument},
		{"evidence_record", ev(obj{"content": nil}), CodeInvalidArgument},
		{"check_record", ck(obj{"proposition_id": "P-nope"}), warrant.CodeMissingView},
		{"check_record", ck(obj{"result": nil}), warrant.CodeInvalidView},
		{"check_record", ck(obj{"result": "true"}), warrant.CodeInvalidView},
		{"check_record", ck(obj{"source": obj{"observed_at": "2026-09-02"}}), warrant.CodeMissingContentHash},
		{"check_record", ck(obj{"source": obj{"content_hash": "h"}}), warrant.CodeMissingObservedAt},
		{"check_record", ck(obj{"subjects": "db-prod-1"}), CodeInvalidArgument},
		{"check_record", ck(obj{"subjects": []any{""}}), CodeInvalidArgument},
		{"check_record", ck(obj{"method": nil}), CodeInvalidArgument},
		{"check_record", ck(obj{"source": obj{"content_hash": "h", "observed_at": "x", "origin_type": "sensor"}, "ingest_attestation": "yes"}), warrant.CodeUnattestedTrusted},
	}
	for _, tc := range cases {
		msg := mustRefuse(t, callCtx(ctx, t, c, tc.tool, tc.args), tc.code)
		if tc.code == warrant.CodeMissingContentHash && !strings.Contains(msg, "source.content_hash") {
			t.Errorf("message should name the field: %s", msg)
		}
	}
	// Same id, different content: the ledger refuses it.
	mustOK(t, callCtx(ctx, t, c, "evidence_record", ev(nil)))
	mustRefuse(t, callCtx(ctx, t, c, "evidence_record", ev(obj{"content": "other"})), warrant.CodeInvalidView)
}
