package tape

// noFollow is nothing on Windows: an exclusive create (CREATE_NEW) opens a reparse point put
// where the file belongs as itself, and so fails on it, as O_NOFOLLOW does elsewhere.
const noFollow = 0
