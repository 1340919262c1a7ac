// Go's net/http hello world: the reference line in http_bench.sh.
// PORT (default 3000); GOMAXPROCS follows the CPU affinity (taskset).
package main

import (
	"fmt"
	"net/http"
	"os"
)

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "3000"
	}
	body := []byte("Hello, World!")
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Write(body)
	})
	addr := "127.0.0.1:" + port
	fmt.Println("go: listening on http://" + addr)
	if err := http.ListenAndServe(addr, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
