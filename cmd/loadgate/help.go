package main

import "embed"

//go:embed help/*.txt
var helpFiles embed.FS

// helpText is help/<name>.txt: a command's -h text.
func helpText(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err) // a command without its help file: a build mistake
	}
	return string(b)
}
