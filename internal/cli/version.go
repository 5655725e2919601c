package cli

import "runtime/debug"

// version is what --version prints: Version when the build set it (the
// Dockerfile and releases do), else the module version the go command recorded
// (`go install github.com/retrieval-gate/retrieval-gate@v1.2.3` gives v1.2.3),
// else "dev" (a build from a checkout).
func version() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(Version, bi)
}

func versionOf(set string, bi *debug.BuildInfo) string {
	if set != "dev" || bi == nil {
		return set
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return set
}
