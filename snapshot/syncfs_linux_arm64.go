package snapshot

const sysSyncfs = 267 // syncfs(2) on linux/arm64
