package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func startRaw(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go serveRaw(c)
		}
	}()
	return ln.Addr().String()
}

func TestRawKeepAliveWithNetHTTPClient(t *testing.T) {
	addr := startRaw(t)
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for i := 0; i < 20; i++ {
		method, reqBody := http.MethodGet, io.Reader(nil)
		if i%2 == 1 {
			method, reqBody = http.MethodPost, strings.NewReader(`{"title":"load"}`)
		}
		req, _ := http.NewRequest(method, "http://"+addr+"/items?page=1", reqBody)
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "ok" {
			t.Fatalf("got %d %q", resp.StatusCode, b)
		}
	}
}

func TestRawPipelinedAndClose(t *testing.T) {
	addr := startRaw(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	req := "GET / HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
		"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for i := 0; i < 3; i++ {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(b) != "ok" {
			t.Fatalf("response %d: %d %q", i, resp.StatusCode, b)
		}
		if i == 2 && !resp.Close {
			t.Fatal("last response should close the connection")
		}
	}
	if _, err := r.ReadByte(); err != io.EOF {
		t.Fatalf("connection not closed: %v", err)
	}
}

func TestRefusesNonLoopback(t *testing.T) {
	if err := run("0.0.0.0:0", "raw", io.Discard); err == nil {
		t.Fatal("listening on 0.0.0.0 should be refused")
	}
}

func TestStats(t *testing.T) {
	addr := startRaw(t)
	get := func(path string) string {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	before := get(statsPath)
	get("/")
	get("/x")
	after := get(statsPath)
	var c0, r0, c1, r1, u, s, v, i int64
	fmt.Sscanf(before, "conns %d reqs %d", &c0, &r0)
	if n, err := fmt.Sscanf(after, "conns %d reqs %d utime_us %d stime_us %d nvcsw %d nivcsw %d", &c1, &r1, &u, &s, &v, &i); n != 6 {
		t.Fatalf("stats %q: %v", after, err)
	}
	if r1-r0 != 2 {
		t.Fatalf("stats %q → %q: want 2 more requests", before, after)
	}
	if u+s <= 0 {
		t.Errorf("stats %q: no CPU time reported", after)
	}
}
