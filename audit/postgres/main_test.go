package postgres_test

import (
	"testing"

	"github.com/ewp-go/ewp/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
