package v1

// Hub marks v1 as the version every other version converts through.
func (*ChaosPod) Hub() {}
