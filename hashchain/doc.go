// Package hashchain is agent-rewind's tamper-evident log: an append-only chain of JSON entries,
// each naming the hash of the one before, with an RFC 6962 Merkle tree over them for heads,
// inclusion proofs and consistency proofs. It imports no other agent-rewind module, so an
// auditor can embed it alone.
//
// # Format
//
// FORMAT.md (also in FormatSpec) is the whole specification; in short:
//
//	chain.jsonl   one entry per line, each the RFC 8785 (JCS) canonical JSON of
//	              {"data":{…},"hash":"<hex>","kind":"…","prev":"<hex>","seq":N,"time":"<RFC 3339 UTC>"}
//	hash          hex SHA-256("agent-rewind/hashchain/v1\n" || JCS(entry without "hash"))
//	prev          the previous entry's hash; 64 zeros for seq 0
//	chain.tree    the Merkle tree's stored hashes (tlog order), derived from chain.jsonl
//	chain.lock    flock(2) serialising appends across processes
//	chain.stamp   (dev, inode, size, ctime) of the chain file last verified whole: a cache
//	anchor        the latest head, kept outside the workspace (AnchorPath), to notice a cut chain
//
// The Merkle leaves are the entries' 32-byte hashes; a head is printed as a C2SP
// tlog-checkpoint ("agent-rewind/<first 32 hex digits of entry 0's hash>", size, base64 root)
// and may be signed as a C2SP signed note with an Ed25519 key (GenerateKey, SignHead,
// OpenSignedHead).
//
// # Use
//
// Open a chain, Append entries (durable when Append returns), and read its Head. VerifyFile
// checks a chain from scratch in bounded memory and locates the first bad entry (a
// *VerifyError). ProveInclusion and ProveConsistency give RFC 6962 proofs that CheckInclusion
// and CheckConsistency check. Export writes the archive an auditor is handed. A crash can leave a
// torn last line (*TornError), which Recover moves aside on a person's request; a chain that no
// longer extends its anchored head fails to open (*AnchorError).
//
// A writer appends only to a chain that verifies whole. It trusts everything before the tail
// when the stamp names the chain file's current state (every write moves a file's ctime, which
// no unprivileged process can set back), and otherwise verifies the chain whole once and
// stamps it: appends stay O(log n), and a line deleted, edited or moved in the middle stops
// every writer (*BrokenError, naming the first bad line). After and Each read entries back.
//
// Leaf modules that record on the chain define
//
//	type Recorder interface { Record(kind string, data any) (seq int64, err error) }
//
// which *Chain satisfies.
package hashchain
