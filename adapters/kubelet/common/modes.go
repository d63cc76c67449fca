package common

// Further modes of a release's binary (ReleaseMain's first argument), which a
// package of the release registers from its init: "machine" and "kconf" of
// ../release (machine.go, kconf.go). Registering keeps ReleaseMain's switch
// to one line for all of them, and a release without the package serves none.

var modes = map[string]func(args []string){}

// RegisterMode makes name a mode of ReleaseMain; run gets the arguments after it.
func RegisterMode(name string, run func(args []string)) { modes[name] = run }

// registeredMode is the mode registered under name, or nil.
func registeredMode(name string) func(args []string) { return modes[name] }
