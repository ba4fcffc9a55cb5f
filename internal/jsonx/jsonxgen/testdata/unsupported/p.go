package p

//jsonx:reader
type root struct {
	Name  string         `json:"name"`
	Extra map[string]int `json:"extra"`
}
