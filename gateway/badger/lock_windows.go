package badger

// probeLock: Badger's own lock on Windows says when the dir is in use.
func probeLock(string) error { return nil }
