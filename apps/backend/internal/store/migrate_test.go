package store

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestReadMigrationsPerEngine(t *testing.T) {
	t.Parallel()
	file := func(sql string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(sql)} }
	fsys := fstest.MapFS{
		"migrations/0001_init.sql":            file("common"),
		"migrations/0002_events.sqlite.sql":   file("lite"),
		"migrations/0002_events.postgres.sql": file("pg"),
		"migrations/0003_more.sql":            file("more"),
	}
	for eng, want := range map[Engine]string{SQLite: "0001_init.sql:common 0002_events.sqlite.sql:lite 0003_more.sql:more",
		Postgres: "0001_init.sql:common 0002_events.postgres.sql:pg 0003_more.sql:more"} {
		ms, err := readMigrations(fsys, eng)
		if err != nil {
			t.Fatalf("%s: %v", eng, err)
		}
		var got []string
		for i, m := range ms {
			if m.version != i+1 {
				t.Fatalf("%s: got version %d at %d, want %d", eng, m.version, i, i+1)
			}
			got = append(got, m.name+":"+m.sql)
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%s: got %s, want %s", eng, g, want)
		}
	}
}

func TestReadMigrationsRejects(t *testing.T) {
	t.Parallel()
	f := &fstest.MapFile{Data: []byte("x")}
	for name, fsys := range map[string]fstest.MapFS{
		"two files of one version":    {"migrations/0001_a.sql": f, "migrations/0001_b.sql": f},
		"common and engine file":      {"migrations/0001_a.sql": f, "migrations/0001_a.postgres.sql": f},
		"one engine only":             {"migrations/0001_a.postgres.sql": f},
		"two files for one engine":    {"migrations/0001_a.sqlite.sql": f, "migrations/0001_b.sqlite.sql": f, "migrations/0001_a.postgres.sql": f},
		"name without version number": {"migrations/init.sql": f},
	} {
		if _, err := readMigrations(fsys, SQLite); err == nil {
			t.Errorf("%s: got nil error, want a refusal", name)
		}
	}
}

func TestEmbeddedMigrationsLoadOnBothEngines(t *testing.T) {
	t.Parallel()
	lite, err1 := loadMigrations(SQLite)
	pg, err2 := loadMigrations(Postgres)
	if err1 != nil || err2 != nil {
		t.Fatalf("got %v, %v; want both engines' migrations", err1, err2)
	}
	if len(lite) != len(pg) || lite[len(lite)-1].version != LatestVersion() {
		t.Fatalf("got %d SQLite and %d PostgreSQL migrations (latest %d), want the same versions ending at %d",
			len(lite), len(pg), lite[len(lite)-1].version, LatestVersion())
	}
}
