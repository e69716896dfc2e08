"""The package version: the REST surface of the TypeScript client of the same version."""

VERSION = "0.3.0"
