package brokertest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The AMQP 0-9-1 wire format, as much of it as the fake AMQP port
// (amqp_server.go) reads and writes: frames, and the fields of the methods
// the provider's client sends and receives.

// Frame types and the end-of-frame octet.
const (
	frameMethod    = 1
	frameHeader    = 2
	frameBody      = 3
	frameHeartbeat = 8
	frameEnd       = 0xCE
	// fakeFrameMax is the largest frame the fake accepts and sends (tune).
	fakeFrameMax = 131072
)

// Methods, as class<<16 | method.
const (
	mConnStart       = 10<<16 | 10
	mConnStartOk     = 10<<16 | 11
	mConnTune        = 10<<16 | 30
	mConnTuneOk      = 10<<16 | 31
	mConnOpen        = 10<<16 | 40
	mConnOpenOk      = 10<<16 | 41
	mConnClose       = 10<<16 | 50
	mConnCloseOk     = 10<<16 | 51
	mChanOpen        = 20<<16 | 10
	mChanOpenOk      = 20<<16 | 11
	mChanClose       = 20<<16 | 40
	mChanCloseOk     = 20<<16 | 41
	mQueueDeclare    = 50<<16 | 10
	mQueueDeclareOk  = 50<<16 | 11
	mQueuePurge      = 50<<16 | 30
	mQueuePurgeOk    = 50<<16 | 31
	mBasicQos        = 60<<16 | 10
	mBasicQosOk      = 60<<16 | 11
	mBasicConsume    = 60<<16 | 20
	mBasicConsumeOk  = 60<<16 | 21
	mBasicCancel     = 60<<16 | 30
	mBasicCancelOk   = 60<<16 | 31
	mBasicPublish    = 60<<16 | 40
	mBasicReturn     = 60<<16 | 50
	mBasicDeliver    = 60<<16 | 60
	mBasicAck        = 60<<16 | 80
	mBasicNack       = 60<<16 | 120
	mConfirmSelect   = 85<<16 | 10
	mConfirmSelectOk = 85<<16 | 11
)

// frame is one AMQP frame.
type frame struct {
	typ     byte
	channel uint16
	payload []byte
}

func readFrame(r *bufio.Reader) (frame, error) {
	var h [7]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, err
	}
	size := binary.BigEndian.Uint32(h[3:])
	if size > fakeFrameMax {
		return frame{}, fmt.Errorf("frame of %d bytes", size)
	}
	f := frame{typ: h[0], channel: binary.BigEndian.Uint16(h[1:3]), payload: make([]byte, size+1)}
	if _, err := io.ReadFull(r, f.payload); err != nil {
		return frame{}, err
	}
	if f.payload[size] != frameEnd {
		return frame{}, errors.New("frame without its end octet")
	}
	f.payload = f.payload[:size]
	return f, nil
}

func (f frame) bytes() []byte {
	b := []byte{f.typ, byte(f.channel >> 8), byte(f.channel)}
	b = binary.BigEndian.AppendUint32(b, uint32(len(f.payload)))
	return append(append(b, f.payload...), frameEnd)
}

// args writes the fields of a method.
type args struct{ b []byte }

func method(id uint32) *args {
	return &args{b: binary.BigEndian.AppendUint32(nil, id)}
}

func (a *args) octet(v byte) *args   { a.b = append(a.b, v); return a }
func (a *args) short(v uint16) *args { a.b = binary.BigEndian.AppendUint16(a.b, v); return a }
func (a *args) long(v uint32) *args  { a.b = binary.BigEndian.AppendUint32(a.b, v); return a }
func (a *args) longlong(v uint64) *args {
	a.b = binary.BigEndian.AppendUint64(a.b, v)
	return a
}

func (a *args) shortstr(s string) *args {
	a.b = append(append(a.b, byte(len(s))), s...)
	return a
}

func (a *args) longstr(s string) *args {
	a.b = append(binary.BigEndian.AppendUint32(a.b, uint32(len(s))), s...)
	return a
}

// fields reads the fields of a method or content header; a field past the
// end reads as zero and sets err.
type fields struct {
	b   []byte
	err error
}

func (f *fields) take(n int) []byte {
	if f.err != nil || len(f.b) < n {
		f.err = io.ErrUnexpectedEOF
		return make([]byte, n)
	}
	v := f.b[:n]
	f.b = f.b[n:]
	return v
}

func (f *fields) octet() byte            { return f.take(1)[0] }
func (f *fields) short() uint16          { return binary.BigEndian.Uint16(f.take(2)) }
func (f *fields) long() uint32           { return binary.BigEndian.Uint32(f.take(4)) }
func (f *fields) longlong() uint64       { return binary.BigEndian.Uint64(f.take(8)) }
func (f *fields) shortstr() string       { return string(f.take(int(f.octet()))) }
func (f *fields) longstr() string        { return string(f.take(int(f.long()))) }
func (f *fields) table()                 { f.take(int(f.long())) }
func (f *fields) methodID() uint32       { return f.long() }
func (f *fields) bit(octet, i byte) bool { return octet&(1<<i) != 0 }

// Content properties: the flag of each, from the highest bit, and how each
// is written (s shortstr, t table, o octet, l longlong).
var propKinds = [14]byte{'s', 's', 't', 'o', 'o', 's', 's', 's', 's', 'l', 's', 's', 's', 's'}

const (
	propMessageID = 8
	propUserID    = 11
)

// props are a message's properties as written on the wire (the flags, then
// the properties they announce): kept and sent again unchanged.
type props []byte

// encodeProps writes the properties with a message id and a user id (each
// left out when empty).
func encodeProps(messageID, userID string) props {
	var flags uint16
	a := &args{}
	if messageID != "" {
		flags |= 1 << (15 - propMessageID)
		a.shortstr(messageID)
	}
	if userID != "" {
		flags |= 1 << (15 - propUserID)
		a.shortstr(userID)
	}
	return append(binary.BigEndian.AppendUint16(nil, flags), a.b...)
}

// shortstrs returns the properties written as shortstr, by index.
func (p props) shortstrs() (map[int]string, error) {
	f := &fields{b: p}
	flags := f.short()
	out := map[int]string{}
	for i, kind := range propKinds {
		if flags&(1<<(15-i)) == 0 {
			continue
		}
		switch kind {
		case 's':
			out[i] = f.shortstr()
		case 't':
			f.table()
		case 'o':
			f.octet()
		case 'l':
			f.longlong()
		}
	}
	return out, f.err
}
