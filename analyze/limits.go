package analyze

// Limits bound one analysis, so that a capture of any size is processed in bounded memory and
// time. FORMAT.md lists them; crossing one is a *LimitError.
type Limits struct {
	RecordBytes   int64 `json:"recordBytes"`   // one record (an NDJSON line without its line end, or an array element)
	TotalBytes    int64 `json:"totalBytes"`    // all input
	ArrayBytes    int64 `json:"arrayBytes"`    // a JSON array or single record, which is read whole
	RequestKeys   int   `json:"requestKeys"`   // distinct request keys held in memory
	Scopes        int   `json:"scopes"`        // distinct scopes (absent counts as one)
	MaxTokenCount int64 `json:"maxTokenCount"` // the largest believable value of one usage token count
}

// The default limits.
const (
	DefaultRecordBytes   = 2 << 20
	DefaultTotalBytes    = 128 << 20
	DefaultArrayBytes    = 16 << 20
	DefaultRequestKeys   = 100_000
	DefaultScopes        = 1_000
	DefaultMaxTokenCount = 100_000_000
)

// DefaultLimits returns the documented limits.
func DefaultLimits() Limits {
	return Limits{
		RecordBytes:   DefaultRecordBytes,
		TotalBytes:    DefaultTotalBytes,
		ArrayBytes:    DefaultArrayBytes,
		RequestKeys:   DefaultRequestKeys,
		Scopes:        DefaultScopes,
		MaxTokenCount: DefaultMaxTokenCount,
	}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.RecordBytes <= 0 {
		l.RecordBytes = d.RecordBytes
	}
	if l.TotalBytes <= 0 {
		l.TotalBytes = d.TotalBytes
	}
	if l.ArrayBytes <= 0 {
		l.ArrayBytes = d.ArrayBytes
	}
	if l.RequestKeys <= 0 {
		l.RequestKeys = d.RequestKeys
	}
	if l.Scopes <= 0 {
		l.Scopes = d.Scopes
	}
	if l.MaxTokenCount <= 0 {
		l.MaxTokenCount = d.MaxTokenCount
	}
	return l
}
