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

// NameOnly reports whether the description's first sentence only says
// the method's name in words ("Performs the signal with start workflow
// execution operation of the workflow service"): its name has no verb
// this package knows, or its object is too compound to phrase. The
// catalog report (gateway catalog) flags such a description for the
// operator to write.
func (a *Method) NameOnly() bool {
	return a.sentence() == a.nameSentence(a.scope())
}
