// Package winpath holds what the Windows ports of the other internal packages share: long
// paths, retrying a file another process holds, and telling Wine from Windows for tests.
package winpath
