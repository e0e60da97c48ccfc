package snapshot

const sysSyncfs = 306 // syncfs(2) on linux/amd64
