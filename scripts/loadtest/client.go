package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const callTimeout = 30 * time.Second

// A poster sends one JSON-RPC POST and reads the whole answer into resp.
// Each worker has its own; they are not safe for concurrent use.
type poster interface {
	post(body []byte, resp *bytes.Buffer) (status int, err error)
	close()
}

// The headers every call sends, as an MCP client of revision 2025-06-18
// does over Streamable HTTP.
var callHeaders = [][2]string{
	{"Content-Type", "application/json"},
	{"Accept", "application/json, text/event-stream"},
	{"MCP-Protocol-Version", "2025-06-18"},
}

// netHTTPPoster posts with net/http's client (-client net/http).
type netHTTPPoster struct {
	client *http.Client
	url    string
}

func (p netHTTPPoster) post(body []byte, resp *bytes.Buffer) (int, error) {
	req, err := http.NewRequest(http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	for _, h := range callHeaders {
		req.Header.Set(h[0], h[1])
	}
	res, err := p.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	resp.Reset()
	_, err = resp.ReadFrom(res.Body)
	return res.StatusCode, err
}

func (netHTTPPoster) close() {}

// rawPoster is a minimal HTTP/1.1 client on one keep-alive connection: it
// writes the request and reads the answer itself. The server sees the same requests as from net/http's
// client; the client spends much less CPU on them, because net/http's
// transport hands every request between three goroutines, and client CPU
// is taken from the server sharing the cores.
type rawPoster struct {
	addr, host, path string
	conn             net.Conn
	br               *bufio.Reader
	bw               *bufio.Writer
	head             []byte
	// arrival (-arrival) asks for connections that note when answers
	// reach the socket; stamp is the current one.
	arrival bool
	stamp   *stampedConn
}

func newRawPoster(rawURL string, arrival bool) (*rawPoster, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" {
		return nil, fmt.Errorf("-client raw needs an http:// URL, got %q", rawURL)
	}
	return &rawPoster{addr: u.Host, host: u.Host, path: u.RequestURI(), arrival: arrival}, nil
}

func (p *rawPoster) post(body []byte, resp *bytes.Buffer) (int, error) {
	if p.conn == nil {
		if err := p.dial(); err != nil {
			return 0, err
		}
	}
	p.head = append(p.head[:0], "POST "+p.path+" HTTP/1.1\r\nHost: "+p.host+"\r\nUser-Agent: ewp-loadtest\r\n"...)
	for _, h := range callHeaders {
		p.head = append(p.head, h[0]+": "+h[1]+"\r\n"...)
	}
	p.head = append(strconv.AppendInt(append(p.head, "Content-Length: "...), int64(len(body)), 10), "\r\n\r\n"...)
	// As net/http's client's Timeout: a stuck server fails the run.
	_ = p.conn.SetDeadline(time.Now().Add(callTimeout))
	_, _ = p.bw.Write(p.head)
	_, _ = p.bw.Write(body)
	if p.stamp != nil {
		p.stamp.expect()
	}
	if err := p.bw.Flush(); err != nil {
		p.close()
		return 0, err
	}
	status, closing, err := readResponse(p.br, resp)
	if err != nil || closing {
		p.close() // the server ends the connection; the next call redials
	}
	return status, err
}

// readResponse reads one HTTP/1.1 response with a Content-Length body,
// which is how the server answers a JSON-RPC POST; anything else (a
// chunked body, say) is an error that names the -client net/http way
// round it. It reads only the headers it needs, sparing the client the
// header map http.ReadResponse builds for every call.
func readResponse(br *bufio.Reader, resp *bytes.Buffer) (status int, closing bool, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, true, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, true, fmt.Errorf("not an HTTP/1.x status line: %q", line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, true, fmt.Errorf("bad status line %q", line)
	}
	length := -1
	for {
		if line, err = br.ReadSlice('\n'); err != nil {
			return status, true, err
		}
		name, value, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case len(name) == 0:
			if length < 0 {
				return status, true, errors.New("answer without Content-Length (use -client net/http)")
			}
			resp.Reset()
			_, err = io.CopyN(resp, br, int64(length))
			return status, closing, err
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return status, true, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return status, true, fmt.Errorf("answer with Transfer-Encoding %q (use -client net/http)", value)
		case bytes.EqualFold(name, []byte("Connection")):
			closing = bytes.EqualFold(value, []byte("close"))
		}
	}
}

func (p *rawPoster) dial() error {
	c, err := net.DialTimeout("tcp", p.addr, 10*time.Second)
	if err != nil {
		return err
	}
	if p.arrival {
		s, err := stampConn(c)
		if err != nil {
			c.Close()
			return err
		}
		p.stamp, c = s, s
	}
	p.conn, p.br, p.bw = c, bufio.NewReaderSize(c, 16<<10), bufio.NewWriterSize(c, 4<<10)
	return nil
}

// arrived is when the last answer's first bytes reached the socket, with
// -arrival; the zero time otherwise.
func (p *rawPoster) arrived() time.Time {
	if p.stamp == nil {
		return time.Time{}
	}
	return p.stamp.arrived()
}

func (p *rawPoster) close() {
	if p.conn != nil {
		_ = p.conn.Close()
		p.conn, p.stamp = nil, nil
	}
}

// newPosters returns one poster per worker for the -client kind, and a
// function that releases what they share.
func newPosters(kind, url string, n int, arrival bool) ([]poster, func(), error) {
	if arrival && kind != "raw" {
		return nil, nil, errors.New("-arrival needs -client raw")
	}
	ps := make([]poster, n)
	urls := strings.Split(url, ",") // replicas: client i calls urls[i % len]
	switch kind {
	case "raw":
		for i := range ps {
			p, err := newRawPoster(urls[i%len(urls)], arrival)
			if err != nil {
				return nil, nil, err
			}
			ps[i] = p
		}
		return ps, func() {}, nil
	case "net/http":
		tr := &http.Transport{
			MaxIdleConns: n, MaxIdleConnsPerHost: n, MaxConnsPerHost: n,
			DisableCompression: true, IdleConnTimeout: time.Minute,
		}
		client := &http.Client{Transport: tr, Timeout: callTimeout}
		for i := range ps {
			ps[i] = netHTTPPoster{client: client, url: urls[i%len(urls)]}
		}
		return ps, tr.CloseIdleConnections, nil
	}
	return nil, nil, errors.New(`-client must be "raw" or "net/http"`)
}
