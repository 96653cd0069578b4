module cadre.dev/e2e/faultproxy

go 1.22
