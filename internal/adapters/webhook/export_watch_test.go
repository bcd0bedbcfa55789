package webhook

// WatchedTargets counts the CA bundle targets watched right now, so a test
// changes a target only once its watch would see it.
func (s *SelfCertSource) WatchedTargets() int { return int(s.watching.Load()) }
