package describe

// Without is a copy of a whose inputs leave out the fields named in
// names (as the caller names them): arguments an operator hid or fixed
// are not a model's to give, so the description written from a's
// structure does not name them (gateway/overrides.go).
func (a *Method) Without(names map[string]bool) *Method {
	c := *a
	parallel := len(a.inputMsgs) == len(a.Inputs)
	c.Inputs, c.inputMsgs, c.Required = nil, nil, nil
	for i, n := range a.Inputs {
		if names[n] {
			continue
		}
		c.Inputs = append(c.Inputs, n)
		if parallel {
			c.inputMsgs = append(c.inputMsgs, a.inputMsgs[i])
		}
	}
	for _, n := range a.Required {
		if !names[n] {
			c.Required = append(c.Required, n)
		}
	}
	return &c
}
