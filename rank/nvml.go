package rank

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlProbe asks NVML. go-nvml dlopens libnvidia-ml.so.1 inside Init, so a machine without
// the driver gets an error here instead of a failure to start.
type nvmlProbe struct{}

var nvmlOnce struct {
	sync.Once
	err error
}

func nvmlInit() error {
	nvmlOnce.Do(func() {
		if ret := nvml.Init(); ret != nvml.SUCCESS {
			if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
				nvmlOnce.err = fmt.Errorf("NVML library libnvidia-ml.so.1 not found (no NVIDIA driver)")
				return
			}
			nvmlOnce.err = fmt.Errorf("NVML init: %v", ret)
		}
		// Never shut down: Identify may be asked again and the process ends soon enough.
	})
	return nvmlOnce.err
}

func (nvmlProbe) Count() (int, error) {
	if err := nvmlInit(); err != nil {
		return 0, err
	}
	n, ret := nvml.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return 0, fmt.Errorf("NVML device count: %v", ret)
	}
	return n, nil
}

func (nvmlProbe) Info(visible string) (GPUInfo, error) {
	if err := nvmlInit(); err != nil {
		return GPUInfo{}, err
	}
	var d nvml.Device
	var ret nvml.Return
	if i, err := strconv.Atoi(visible); err == nil {
		d, ret = nvml.DeviceGetHandleByIndex(i)
	} else if strings.HasPrefix(visible, "GPU-") || strings.HasPrefix(visible, "MIG-") {
		d, ret = nvml.DeviceGetHandleByUUID(visible)
	} else {
		return GPUInfo{}, fmt.Errorf("CUDA_VISIBLE_DEVICES entry %q is neither an index nor a UUID", visible)
	}
	if ret != nvml.SUCCESS {
		return GPUInfo{}, fmt.Errorf("NVML device %s: %v", visible, ret)
	}
	var info GPUInfo
	if info.Name, ret = d.GetName(); ret != nvml.SUCCESS {
		return info, fmt.Errorf("NVML device %s name: %v", visible, ret)
	}
	if info.UUID, ret = d.GetUUID(); ret != nvml.SUCCESS {
		return info, fmt.Errorf("NVML device %s UUID: %v", visible, ret)
	}
	mem, ret := d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return info, fmt.Errorf("NVML device %s memory: %v", visible, ret)
	}
	info.MemoryBytes = mem.Total
	return info, nil
}

// nvmlSource samples one device through NVML.
type nvmlSource struct{ d nvml.Device }

// openNVMLSource finds the device of a CUDA_VISIBLE_DEVICES entry for sampling.
func openNVMLSource(visible string) (GPUSource, GPUInfo, error) {
	info, err := nvmlProbe{}.Info(visible)
	if err != nil {
		return nil, info, err
	}
	d, ret := nvml.DeviceGetHandleByUUID(info.UUID)
	if ret != nvml.SUCCESS {
		return nil, info, fmt.Errorf("NVML device %s: %v", visible, ret)
	}
	return nvmlSource{d}, info, nil
}

func (s nvmlSource) Read() (GPUReading, error) {
	var r GPUReading
	u, ret := s.d.GetUtilizationRates()
	if ret != nvml.SUCCESS {
		return r, fmt.Errorf("NVML utilization: %v", ret)
	}
	r.Utilization = float64(u.Gpu) / 100
	mem, ret := s.d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return r, fmt.Errorf("NVML memory: %v", ret)
	}
	r.MemoryUsedBytes = mem.Used
	// Power and temperature are missing on some boards (and in some MIG setups): 0, not an error.
	if mw, ret := s.d.GetPowerUsage(); ret == nvml.SUCCESS {
		r.PowerWatts = float64(mw) / 1000
	}
	if c, ret := s.d.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		r.TemperatureC = float64(c)
	}
	return r, nil
}
