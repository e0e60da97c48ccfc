package objects

// SmallFile is the size up to which a content is packed (a larger one is a loose object of its
// own, which gc can remove without rewriting a pack), and up to which a checkpoint reads a file
// whole into memory (one read, one hash, and a write only if the content is new); a larger file
// is streamed to a staging file while it is hashed.
const SmallFile = 1 << 20
