package main

import (
	"os"

	"github.com/hexagonal-operator/operator/internal/app"
)

func main() {
	os.Exit(app.Main("operator", os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}
