/* A fake libnvidia-ml for the health monitor's tests: the GPUs' state comes from the file named by
 * $CTWIN_FAKE_NVML_STATE, read again at every call, so a test changes it while the monitor runs.
 * One directive per line ('#' starts a comment):
 *   gpus N                      devices (default 1)
 *   ecc GPU corrected|uncorrected N
 *   remap GPU PENDING FAILURE   row remapper flags (0 or 1)
 *   nvlink GPU LINK up|down     links not named do not exist
 *   nvlink_errors GPU LINK N    added to every counter of the link's
 *   clocks GPU SM MAX           MHz
 *   throttle GPU MASK           clock event reasons (hex or decimal)
 *   temperature GPU C
 *   xid GPU CODE                an Xid event, delivered once, in file order
 *   lost GPU                    every query of the GPU answers NVML_ERROR_GPU_IS_LOST
 *   stall SECONDS               every query sleeps this long (a wedged driver)
 *   init_fails                  nvmlInit fails (no driver) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_GPUS 8
#define MAX_LINKS 18
#define MAX_XIDS 64

typedef struct {
  unsigned long long ecc[2];
  unsigned pending, failure;
  int link[MAX_LINKS]; /* -1 absent, 0 down, 1 up */
  unsigned long long link_errors[MAX_LINKS];
  unsigned sm, sm_max, temperature;
  unsigned long long throttle;
  int lost;
} gpu_t;

typedef struct {
  int gpus, init_fails, xids, xid_gpu[MAX_XIDS], xid_code[MAX_XIDS];
  double stall;
  gpu_t gpu[MAX_GPUS];
} state_t;

typedef struct {
  void* device;
  unsigned long long type, data;
  unsigned gi, ci;
} event_t;

static int delivered;          /* xid events of the current state file handed out so far */
static char delivered_for[512]; /* that file: a test that names another starts again */

static void sleep_s(double s) {
  struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&t, NULL);
}

static state_t read_state(void) {
  state_t s;
  memset(&s, 0, sizeof s);
  s.gpus = 1;
  for (int g = 0; g < MAX_GPUS; ++g) {
    for (int l = 0; l < MAX_LINKS; ++l) s.gpu[g].link[l] = -1;
    s.gpu[g].sm = s.gpu[g].sm_max = 1980;
    s.gpu[g].temperature = 40;
  }
  const char* path = getenv("CTWIN_FAKE_NVML_STATE");
  if (path && strncmp(path, delivered_for, sizeof delivered_for)) {
    snprintf(delivered_for, sizeof delivered_for, "%s", path);
    delivered = 0;
  }
  FILE* f = path ? fopen(path, "r") : NULL;
  if (!f) return s;
  char line[256], word[32], what[32];
  while (fgets(line, sizeof line, f)) {
    int g = 0, a = 0;
    unsigned long long n = 0;
    if (sscanf(line, "%31s", word) != 1 || word[0] == '#') continue;
    if (!strcmp(word, "gpus")) sscanf(line, "%*s %d", &s.gpus);
    else if (!strcmp(word, "init_fails")) s.init_fails = 1;
    else if (!strcmp(word, "stall")) sscanf(line, "%*s %lf", &s.stall);
    else if (sscanf(line, "%*s %d", &g) != 1 || g < 0 || g >= MAX_GPUS) continue;
    else if (!strcmp(word, "ecc") && sscanf(line, "%*s %*d %31s %llu", what, &n) == 2) s.gpu[g].ecc[!strcmp(what, "uncorrected")] = n;
    else if (!strcmp(word, "remap")) sscanf(line, "%*s %*d %u %u", &s.gpu[g].pending, &s.gpu[g].failure);
    else if (!strcmp(word, "nvlink") && sscanf(line, "%*s %*d %d %31s", &a, what) == 2 && a >= 0 && a < MAX_LINKS)
      s.gpu[g].link[a] = !strcmp(what, "up");
    else if (!strcmp(word, "nvlink_errors") && sscanf(line, "%*s %*d %d %llu", &a, &n) == 2 && a >= 0 && a < MAX_LINKS)
      s.gpu[g].link_errors[a] = n;
    else if (!strcmp(word, "clocks")) sscanf(line, "%*s %*d %u %u", &s.gpu[g].sm, &s.gpu[g].sm_max);
    else if (!strcmp(word, "throttle")) sscanf(line, "%*s %*d %lli", (long long*)&s.gpu[g].throttle);
    else if (!strcmp(word, "temperature")) sscanf(line, "%*s %*d %u", &s.gpu[g].temperature);
    else if (!strcmp(word, "lost")) s.gpu[g].lost = 1;
    else if (!strcmp(word, "xid") && s.xids < MAX_XIDS && sscanf(line, "%*s %*d %d", &a) == 1) {
      s.xid_gpu[s.xids] = g;
      s.xid_code[s.xids++] = a;
    }
  }
  fclose(f);
  return s;
}

/* Every device query: the current state, after the stall; the GPU, or NULL when lost or unknown. */
static gpu_t* query(void* device, state_t* s, int* rc) {
  *s = read_state();
  if (s->stall > 0) sleep_s(s->stall);
  const long g = (long)(size_t)device - 1;
  *rc = g < 0 || g >= s->gpus ? 2 : s->gpu[g].lost ? 15 : 0;
  return *rc ? NULL : &s->gpu[g];
}

#define QUERY(device)              \
  state_t s;                       \
  int rc;                          \
  gpu_t* gpu = query(device, &s, &rc); \
  if (!gpu) return rc;

int nvmlInit_v2(void) { return read_state().init_fails ? 9 : 0; }
int nvmlShutdown(void) { return 0; }
const char* nvmlErrorString(int r) {
  switch (r) {
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 9: return "Driver Not Loaded";
    case 10: return "Timeout";
    case 15: return "GPU is lost";
    default: return "Unknown Error";
  }
}
int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = (unsigned)read_state().gpus;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** device) {
  if ((int)i >= read_state().gpus) return 2;
  *device = (void*)(size_t)(i + 1);
  return 0;
}
typedef struct {
  char legacy[16];
  unsigned domain, bus, device, id, subsystem;
  char bus_id[32];
} pci_t;
int nvmlDeviceGetPciInfo_v3(void* device, pci_t* pci) {
  memset(pci, 0, sizeof *pci);
  const unsigned bus = 0x18 + 0x10 * (unsigned)((size_t)device - 1);
  snprintf(pci->bus_id, sizeof pci->bus_id, "00000000:%02X:00.0", bus);
  pci->bus = bus;
  return 0;
}
/* Identities as NVML writes them: the UUID from the index, one model for all. */
int nvmlDeviceGetUUID(void* device, char* uuid, unsigned length) {
  snprintf(uuid, length, "GPU-00000000-0000-0000-0000-%012zu", (size_t)device - 1);
  return 0;
}
int nvmlDeviceGetName(void* device, char* name, unsigned length) {
  (void)device;
  snprintf(name, length, "NVIDIA H100 80GB HBM3");
  return 0;
}
int nvmlDeviceGetTotalEccErrors(void* device, int type, int counter, unsigned long long* n) {
  QUERY(device);
  (void)counter;
  *n = gpu->ecc[type == 1];
  return 0;
}
int nvmlDeviceGetRemappedRows(void* device, unsigned* c, unsigned* u, unsigned* pending, unsigned* failure) {
  QUERY(device);
  *c = *u = 0;
  *pending = gpu->pending;
  *failure = gpu->failure;
  return 0;
}
int nvmlDeviceGetNvLinkState(void* device, unsigned link, int* active) {
  QUERY(device);
  if (link >= MAX_LINKS || gpu->link[link] < 0) return 2;
  *active = gpu->link[link];
  return 0;
}
int nvmlDeviceGetNvLinkErrorCounter(void* device, unsigned link, int counter, unsigned long long* n) {
  QUERY(device);
  (void)counter;
  if (link >= MAX_LINKS || gpu->link[link] < 0) return 2;
  *n = gpu->link_errors[link];
  return 0;
}
int nvmlDeviceGetClockInfo(void* device, int type, unsigned* mhz) {
  QUERY(device);
  (void)type;
  *mhz = gpu->sm;
  return 0;
}
int nvmlDeviceGetMaxClockInfo(void* device, int type, unsigned* mhz) {
  QUERY(device);
  (void)type;
  *mhz = gpu->sm_max;
  return 0;
}
int nvmlDeviceGetCurrentClocksEventReasons(void* device, unsigned long long* reasons) {
  QUERY(device);
  *reasons = gpu->throttle;
  return 0;
}
int nvmlDeviceGetTemperature(void* device, int sensor, unsigned* c) {
  QUERY(device);
  (void)sensor;
  *c = gpu->temperature;
  return 0;
}
int nvmlEventSetCreate(void** set) {
  *set = (void*)(size_t)1;
  return 0;
}
int nvmlDeviceRegisterEvents(void* device, unsigned long long types, void* set) {
  (void)device, (void)types, (void)set;
  return 0;
}
int nvmlEventSetFree(void* set) {
  (void)set;
  return 0;
}
/* Blocks up to the timeout, as NVML does, watching the file for a new Xid line. */
int nvmlEventSetWait_v2(void* set, event_t* data, unsigned timeout_ms) {
  (void)set;
  for (unsigned waited = 0;; waited += 10) {
    const state_t s = read_state();
    if (delivered < s.xids) {
      memset(data, 0, sizeof *data);
      data->device = (void*)(size_t)(s.xid_gpu[delivered] + 1);
      data->type = 0x8;
      data->data = (unsigned long long)s.xid_code[delivered++];
      return 0;
    }
    if (waited >= timeout_ms) return 10;
    sleep_s(0.01);
  }
}
