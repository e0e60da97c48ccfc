package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/signal"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

func main() {
	var steps []mockmodel.Step
	var spec []struct {
		Names []string
		Args  map[string]any
	}
	json.Unmarshal([]byte(os.Args[2]), &spec)
	for _, s := range spec {
		steps = append(steps, mockmodel.Call(s.Args, s.Names...))
	}
	srv, err := mockmodel.Start(mockmodel.Sequence("all done", steps...))
	if err != nil {
		panic(err)
	}
	fmt.Println(srv.URL)
	os.WriteFile(os.Args[1]+".url", []byte(srv.URL), 0o644)
	_ = http.StatusOK
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	<-ch
	b, _ := json.MarshalIndent(srv.Log(), "", " ")
	os.WriteFile(os.Args[1], b, 0o644)
}
