package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// MaxReply bounds the body of a provider's reply. A non-streamed reply holding the largest
// output any model writes is a few megabytes of JSON.
const MaxReply = 64 << 20

// Reply is a provider's HTTP reply, read whole.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// OK reports a 2xx status.
func (r Reply) OK() bool { return r.Status >= 200 && r.Status <= 299 }

// Post is the one HTTP exchange of the provider packages: it sends body, encoded as JSON, to
// endpoint with header (plus Content-Type), under timeout when it is positive, and reads the
// reply, refusing one larger than maxReply bytes (MaxReply when 0). A reply with an error
// status is returned as it is: each provider reads its own error envelope. A failure before a
// complete reply arrived is classified (ClassifyError). Nothing here retries; the request's
// URL and headers, which may hold a key, appear in no error.
func Post(ctx context.Context, client *http.Client, provider, endpoint string, header http.Header, body any, timeout time.Duration, maxReply int64) (Reply, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return Reply{}, fmt.Errorf("%s: encode the request: %w", provider, err)
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(raw))
	if err != nil {
		return Reply{}, fmt.Errorf("%s: the API's URL is not valid; check the base URL", provider)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Reply{}, ClassifyError(provider, err)
	}
	defer resp.Body.Close()
	if maxReply <= 0 {
		maxReply = MaxReply
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		return Reply{}, ClassifyError(provider, err)
	}
	if int64(len(data)) > maxReply {
		return Reply{}, &ProviderError{Provider: provider, Kind: KindOther, Status: resp.StatusCode,
			Message: fmt.Sprintf("the reply is larger than %d bytes", maxReply)}
	}
	return Reply{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}
