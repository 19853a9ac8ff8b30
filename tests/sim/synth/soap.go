package main

// Requests are small: they are parsed into a tree of elements. Answers are
// streamed (see out.go); faults are written whole.

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
)

type node struct {
	name  string // local name
	attrs map[string]string
	text  string
	kids  []*node
}

func (n *node) child(name string) *node {
	if n == nil {
		return nil
	}
	for _, k := range n.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

func (n *node) all(name string) []*node {
	if n == nil {
		return nil
	}
	var r []*node
	for _, k := range n.kids {
		if k.name == name {
			r = append(r, k)
		}
	}
	return r
}

func (n *node) textOf(name string) string {
	if c := n.child(name); c != nil {
		return strings.TrimSpace(c.text)
	}
	return ""
}

func parseXML(b []byte) (*node, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	root := &node{}
	stack := []*node{root}
	for {
		t, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := t.(type) {
		case xml.StartElement:
			n := &node{name: t.Name.Local}
			for _, a := range t.Attr {
				if n.attrs == nil {
					n.attrs = map[string]string{}
				}
				n.attrs[a.Name.Local] = a.Value
			}
			p := stack[len(stack)-1]
			p.kids = append(p.kids, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			stack[len(stack)-1].text += string(t)
		}
	}
	return root, nil
}

// body returns the method element of a SOAP envelope.
func soapMethod(root *node) *node {
	env := root.child("Envelope")
	b := env.child("Body")
	if b == nil || len(b.kids) == 0 {
		return nil
	}
	return b.kids[0]
}

const envHead = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
	`<soapenv:Envelope xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/" xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>`
const envTail = `</soapenv:Body></soapenv:Envelope>`

type fault struct {
	msg    string
	typ    string // vim fault type, e.g. NotAuthenticated
	detail string // inner XML of the fault element
}

func (f *fault) xml() []byte {
	var b bytes.Buffer
	b.WriteString(envHead)
	b.WriteString(`<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>`)
	xml.EscapeText(&b, []byte(f.msg))
	b.WriteString(`</faultstring><detail><`)
	b.WriteString(f.typ)
	b.WriteString(`Fault xmlns="urn:vim25" xsi:type="`)
	b.WriteString(f.typ)
	b.WriteString(`">`)
	b.WriteString(f.detail)
	b.WriteString(`</`)
	b.WriteString(f.typ)
	b.WriteString(`Fault></detail></soapenv:Fault>`)
	b.WriteString(envTail)
	return b.Bytes()
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
