// tlogcheck checks a warden transparency log with the Go originals of signed notes and tile
// proofs (golang.org/x/mod/sumdb/note and sumdb/tlog), so that warden's checkpoints,
// cosignatures, tiles and proofs are read by an implementation warden does not contain.
//
//	tlogcheck LOGDIR LOG_VKEY PROOF SHA256 [WITNESS_VKEY...]
//
// It verifies LOGDIR/checkpoint (the log's signature with note.Open, and each witness's
// cosignature/v1 with a verifier written here from the C2SP spec), reads the log's tiles
// through tlog.TileHashReader, reads the entry the proof names from its entry bundle, checks
// that the entry records the SHA-256 given, checks the proof file's inclusion proof against
// its own checkpoint with tlog.CheckRecord, and proves with tlog.ProveTree / CheckTree that the
// log's checkpoint extends the proof's. It prints one line per check and exits 1 on failure.
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "tlogcheck: "+format+"\n", args...)
	os.Exit(1)
}

// cosigner verifies C2SP tlog-cosignature (type 0x04) signatures.
type cosigner struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

func (c *cosigner) Name() string    { return c.name }
func (c *cosigner) KeyHash() uint32 { return c.hash }
func (c *cosigner) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig[:8])
	m := append([]byte(fmt.Sprintf("cosignature/v1\ntime %d\n", t)), msg...)
	return ed25519.Verify(c.key, m, sig[8:])
}

func newCosigner(vkey string) *cosigner {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		fail("witness vkey %q: not NAME+ID+KEY", vkey)
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) != 33 || raw[0] != 0x04 {
		fail("witness vkey %q: not a cosignature key", vkey)
	}
	h := sha256.Sum256(append(append([]byte(parts[0]), '\n'), raw...))
	id := binary.BigEndian.Uint32(h[:4])
	if fmt.Sprintf("%08x", id) != parts[1] {
		fail("witness vkey %q: key id does not match", vkey)
	}
	return &cosigner{name: parts[0], hash: id, key: ed25519.PublicKey(raw[1:])}
}

// tree parses a C2SP checkpoint body: origin, size, base64 root.
func tree(text []byte, origin string) tlog.Tree {
	lines := strings.Split(string(text), "\n")
	if len(lines) < 4 || lines[0] != origin {
		fail("checkpoint body %q: not a checkpoint of %s", text, origin)
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		fail("checkpoint size: %v", err)
	}
	h, err := tlog.ParseHash(lines[2])
	if err != nil {
		fail("checkpoint root: %v", err)
	}
	return tlog.Tree{N: n, Hash: h}
}

func open(msg []byte, verifiers note.Verifiers) *note.Note {
	n, err := note.Open(msg, verifiers)
	if err != nil {
		fail("note.Open: %v", err)
	}
	return n
}

// tiles reads C2SP tiles: Go's paths are sumdb's (tile/8/L/N), C2SP's drop the height.
type tiles struct{ dir string }

func (t tiles) Height() int { return 8 }
func (t tiles) ReadTiles(ts []tlog.Tile) ([][]byte, error) {
	var out [][]byte
	for _, tile := range ts {
		p := strings.Replace(tile.Path(), "tile/8/", "tile/", 1)
		data, err := os.ReadFile(filepath.Join(t.dir, p))
		if err != nil {
			return nil, err
		}
		if len(data) != tile.W*tlog.HashSize {
			return nil, errors.New(p + ": wrong length")
		}
		out = append(out, data)
	}
	return out, nil
}
func (t tiles) SaveTiles([]tlog.Tile, [][]byte) {}

// entry reads entry index from its bundle (u16 big-endian length, then the bytes).
func entry(dir string, index, size int64) []byte {
	n := index / 256
	width := size - n*256
	if width > 256 {
		width = 256
	}
	p := tlog.Tile{H: 8, L: -1, N: n, W: int(width)}.Path()
	p = strings.Replace(p, "tile/8/data/", "tile/entries/", 1)
	data, err := os.ReadFile(filepath.Join(dir, p))
	if err != nil {
		fail("%v", err)
	}
	for i := int64(0); ; i++ {
		if len(data) < 2 {
			fail("%s: entry %d missing", p, index)
		}
		l := int(binary.BigEndian.Uint16(data[:2]))
		if len(data) < 2+l {
			fail("%s: truncated", p)
		}
		if n*256+i == index {
			return data[2 : 2+l]
		}
		data = data[2+l:]
	}
}

func main() {
	if len(os.Args) < 5 {
		fail("usage: tlogcheck LOGDIR LOG_VKEY PROOF SHA256 [WITNESS_VKEY...]")
	}
	dir, vkey, proofPath, sha := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	logVerifier, err := note.NewVerifier(vkey)
	if err != nil {
		fail("log vkey: %v", err)
	}
	list := []note.Verifier{logVerifier}
	for _, w := range os.Args[5:] {
		list = append(list, newCosigner(w))
	}
	verifiers := note.VerifierList(list...)
	origin := logVerifier.Name()

	msg, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
	if err != nil {
		fail("%v", err)
	}
	cp := open(msg, verifiers)
	if len(cp.Sigs) != len(list) {
		fail("checkpoint: %d of %d signatures verified", len(cp.Sigs), len(list))
	}
	var names []string
	for _, s := range cp.Sigs {
		names = append(names, s.Name)
	}
	current := tree([]byte(cp.Text), origin)
	fmt.Printf("checkpoint: size %d, signed by %s\n", current.N, strings.Join(names, ", "))

	reader := tlog.TileHashReader(current, tiles{dir})
	root, err := tlog.TreeHash(current.N, reader)
	if err != nil || root != current.Hash {
		fail("tiles: do not hash to the checkpoint's root: %v", err)
	}
	fmt.Println("tiles: hash to the checkpoint's root")

	raw, err := os.ReadFile(proofPath)
	if err != nil {
		fail("%v", err)
	}
	parts := bytes.SplitN(raw, []byte("\n\n"), 2)
	head := strings.Split(string(parts[0]), "\n")
	if head[0] != "c2sp.org/tlog-proof@v1" || !strings.HasPrefix(head[1], "index ") {
		fail("proof: not a tlog-proof")
	}
	index, err := strconv.ParseInt(strings.TrimPrefix(head[1], "index "), 10, 64)
	if err != nil {
		fail("proof index: %v", err)
	}
	var proof tlog.RecordProof
	for _, line := range head[2:] {
		h, err := tlog.ParseHash(line)
		if err != nil {
			fail("proof hash: %v", err)
		}
		proof = append(proof, h)
	}
	proofCp := open(parts[1], note.VerifierList(logVerifier))
	at := tree([]byte(proofCp.Text), origin)

	record := entry(dir, index, current.N)
	if !bytes.Contains(record, []byte("\nsha256 "+sha+"\n")) {
		fail("entry %d does not record SHA-256 %s", index, sha)
	}
	if err := tlog.CheckRecord(proof, at.N, at.Hash, index, tlog.RecordHash(record)); err != nil {
		fail("inclusion proof: %v", err)
	}
	fmt.Printf("proof: entry %d is in the tree of size %d\n", index, at.N)

	if at.N < current.N {
		tp, err := tlog.ProveTree(current.N, at.N, reader)
		if err != nil {
			fail("ProveTree: %v", err)
		}
		if err := tlog.CheckTree(tp, current.N, current.Hash, at.N, at.Hash); err != nil {
			fail("consistency: %v", err)
		}
	}
	fmt.Printf("consistency: the tree of size %d extends the one of size %d\n", current.N, at.N)
}
