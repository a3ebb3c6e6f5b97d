// Command caddy is Caddy with its standard modules, for the fault example's FROM
// scratch image; its own module keeps Caddy's dependencies out of loadgate's go.mod.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

func main() { caddycmd.Main() }
