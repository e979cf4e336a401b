/* fabricsim-probe: command line, device discovery and the calibration file.
 *
 * Usage: fabricsim-probe [--quick] [--only NAME[,NAME]] [--device N]
 *                        [--extra KEY=VALUE]... [-o FILE]
 * Runs the selected probes and writes one calibration JSON (format in
 * validation/README.md) to FILE (default: standard output). The file is
 * written to FILE.tmp and renamed at the end, so an interrupted run leaves
 * no truncated calibration behind.
 * Exit status: 0 success, 1 a CUDA/library call failed, 2 usage error or no
 * CUDA device ("no CUDA device found").
 */
#include "probe.h"

#include <cublasLt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int fs_probe_nccl_version(void); /* nccl.cu: 0 when built without NCCL */

static const struct {
  const char *name;
  FsProbeFn fn;
  const char *help;
} probes[] = {
  {"memcpy", fs_probe_memcpy, "host<->device copies, pinned and pageable, 4 B - 1 GiB"},
  {"membw", fs_probe_membw, "device memory bandwidth: copy and triad kernels, cudaMemcpy D2D"},
  {"launch", fs_probe_launch, "kernel launch latency: back-to-back, synchronous, CUDA graph"},
  {"gemm", fs_probe_gemm, "GEMM throughput by shape and datatype (cuBLASLt: fp32 tf32 bf16 fp16 fp8)"},
  {"p2p", fs_probe_p2p, "peer-to-peer copies between every GPU pair (needs >= 2 GPUs)"},
  {"nccl", fs_probe_nccl, "NCCL collectives over all visible GPUs (single process)"},
};
static const int NPROBES = (int)(sizeof probes / sizeof probes[0]);

void fs_probe_die(const char *file, int line, const char *what, const char *msg)
{
  fprintf(stderr, "fabricsim-probe: %s:%d: %s failed: %s\n", file, line, what, msg);
  exit(1);
}

void fs_probe_log(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("  ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void fs_probe_skip(FsProbeCtx *ctx, const char *probe, const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "  skipped %s: %s\n", probe, buf);
  if (ctx->nskips < FS_PROBE_MAX_SKIPS) {
    ctx->skip_probe[ctx->nskips] = strdup(probe);
    ctx->skip_reason[ctx->nskips] = strdup(buf);
    ctx->nskips++;
  }
}

void fs_probe_record_begin(FsProbeCtx *ctx, const char *probe)
{
  fs_json_object_begin(ctx->out, NULL, 1);
  fs_json_string(ctx->out, "probe", probe);
}

const char *fs_probe_size_str(uint64_t bytes, char *buf, size_t len)
{
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    u++;
  }
  snprintf(buf, len, "%llu %s", (unsigned long long)bytes, units[u]);
  return buf;
}

static void usage(FILE *f)
{
  fprintf(f,
          "usage: fabricsim-probe [--quick] [--only NAME[,NAME...]] [--device N]\n"
          "                       [--extra KEY=VALUE]... [-o FILE] [--list]\n"
          "Measures this machine's GPUs and writes a fabricsim calibration JSON.\n"
          "example: fabricsim-probe --quick --only memcpy,launch -o h100.json\n"
          "probes:\n");
  for (int i = 0; i < NPROBES; i++)
    fprintf(f, "  %-7s %s\n", probes[i].name, probes[i].help);
}

static void version_str(int v, int major_div, char *buf, size_t len)
{
  /* CUDA: 13000 -> 13.0; cuBLAS/NCCL (major*10000 + minor*100 + patch) -> 13.1.0 */
  if (major_div == 1000)
    snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
  else
    snprintf(buf, len, "%d.%d.%d", v / 10000, (v % 10000) / 100, v % 100);
}

/* "580.159.04" from /proc/driver/nvidia/version, or NULL. */
static char *kernel_driver_version(void)
{
  FILE *f = fopen("/proc/driver/nvidia/version", "r");
  if (!f)
    return NULL;
  char line[512], *result = NULL;
  if (fgets(line, sizeof line, f)) {
    for (char *tok = strtok(line, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
      unsigned a, b;
      if (sscanf(tok, "%u.%u", &a, &b) == 2 && strchr(tok, '.')) {
        result = strdup(tok);
        break;
      }
    }
  }
  fclose(f);
  return result;
}

static char *cpu_model(void)
{
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return NULL;
  char line[512], *result = NULL;
  while (!result && fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) == 0) {
      char *colon = strchr(line, ':');
      if (colon) {
        colon += 1 + (colon[1] == ' ');
        colon[strcspn(colon, "\n")] = 0;
        result = strdup(colon);
      }
    }
  }
  fclose(f);
  return result;
}

static void write_device(FsJson *j, int dev)
{
  cudaDeviceProp p;
  FS_CK(cudaGetDeviceProperties(&p, dev));
  int clock_khz = 0, mem_clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, dev);
  char cc[16], bus[32];
  snprintf(cc, sizeof cc, "%d.%d", p.major, p.minor);
  snprintf(bus, sizeof bus, "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
  fs_json_object_begin(j, NULL, 0);
  fs_json_int(j, "index", dev);
  fs_json_string(j, "name", p.name);
  fs_json_string(j, "compute_capability", cc);
  fs_json_int(j, "sm_count", p.multiProcessorCount);
  fs_json_uint(j, "memory_bytes", p.totalGlobalMem);
  fs_json_int(j, "memory_bus_width_bits", p.memoryBusWidth);
  fs_json_int(j, "memory_clock_khz", mem_clock_khz);
  fs_json_int(j, "sm_clock_khz", clock_khz);
  fs_json_uint(j, "l2_bytes", (unsigned long long)p.l2CacheSize);
  fs_json_uint(j, "shared_memory_per_sm_bytes", p.sharedMemPerMultiprocessor);
  fs_json_string(j, "pci_bus_id", bus);
  fs_json_object_end(j);
}

static int selected(const char *only, const char *name)
{
  if (!only)
    return 1;
  size_t n = strlen(name);
  for (const char *p = only; *p;) {
    size_t len = strcspn(p, ",");
    if (len == n && strncmp(p, name, n) == 0)
      return 1;
    p += len + (p[len] == ',');
  }
  return 0;
}

/* fabricsim-probe: parses the command line (usage()), checks --only's names and the device,
 * opens the output (-o FILE, written atomically, or stdout), writes the machine's record and
 * runs every probe selected, in table order, then the summary.  Exit status 0, 2 on a usage
 * error or with no CUDA device. */
int main(int argc, char **argv)
{
  int quick = 0, device = 0, nextra = 0;
  const char *only = NULL, *out_path = NULL;
  const char *extra[32];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--quick")) {
      quick = 1;
    } else if (!strcmp(a, "--list")) {
      for (int k = 0; k < NPROBES; k++)
        printf("%s\n", probes[k].name);
      return 0;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if ((!strcmp(a, "--only") || !strcmp(a, "-o") || !strcmp(a, "--device") ||
                !strcmp(a, "--extra")) && i + 1 < argc) {
      const char *v = argv[++i];
      if (!strcmp(a, "--only"))
        only = v;
      else if (!strcmp(a, "-o"))
        out_path = v;
      else if (!strcmp(a, "--device"))
        device = atoi(v);
      else if (nextra < 32 && strchr(v, '='))
        extra[nextra++] = v;
      else {
        fprintf(stderr, "fabricsim-probe: --extra expects KEY=VALUE (at most 32), got '%s'\n", v);
        return 2;
      }
    } else {
      fprintf(stderr, "fabricsim-probe: unknown or incomplete argument '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (only) {
    for (const char *p = only; *p;) {
      size_t len = strcspn(p, ",");
      int ok = 0;
      for (int k = 0; k < NPROBES; k++)
        ok |= strlen(probes[k].name) == len && !strncmp(p, probes[k].name, len);
      if (!ok) {
        fprintf(stderr, "fabricsim-probe: unknown probe '%.*s' (see --list)\n", (int)len, p);
        return 2;
      }
      p += len + (p[len] == ',');
    }
  }

  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    fprintf(stderr, "fabricsim-probe: no CUDA device found (%s)\n",
            e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 2;
  }
  if (device < 0 || device >= ndev) {
    fprintf(stderr, "fabricsim-probe: --device %d: only %d device(s) visible\n", device, ndev);
    return 2;
  }

  FsProbeCtx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.quick = quick;
  ctx.device = device;
  ctx.ndev = ndev;
  FS_CK(cudaSetDevice(device));
  FS_CK(cudaGetDeviceProperties(&ctx.prop, device));
  FS_CK(cudaFree(0)); /* create the context before any timing */

  char tmp_path[4096];
  FILE *f = stdout;
  if (out_path && strcmp(out_path, "-")) {
    snprintf(tmp_path, sizeof tmp_path, "%s.tmp", out_path);
    f = fopen(tmp_path, "w");
    if (!f) {
      perror(tmp_path);
      return 2;
    }
  }

  FsJson root;
  fs_json_init(&root, f, 0);
  fs_json_object_begin(&root, NULL, 0);
  fs_json_int(&root, "schema_version", FS_PROBE_SCHEMA_VERSION);
  fs_json_object_begin(&root, "generator", 1);
  fs_json_string(&root, "name", "fabricsim-probe");
  fs_json_string(&root, "version", FS_PROBE_VERSION);
  fs_json_object_end(&root);
  fs_json_string(&root, "mode", quick ? "quick" : "full");
  char date[64], host[256] = "";
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  fs_json_string(&root, "date", date);
  gethostname(host, sizeof host - 1);
  char *cpu = cpu_model();
  fs_json_object_begin(&root, "host", 0);
  fs_json_string(&root, "hostname", host);
  fs_json_string(&root, "cpu", cpu);
  fs_json_int(&root, "cpu_count", sysconf(_SC_NPROCESSORS_ONLN));
  fs_json_uint(&root, "memory_bytes",
               (unsigned long long)sysconf(_SC_PHYS_PAGES) * (unsigned long long)sysconf(_SC_PAGESIZE));
  fs_json_object_end(&root);
  free(cpu);

  int drv = 0, rt = 0;
  char vbuf[32];
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  char *kdrv = kernel_driver_version();
  fs_json_object_begin(&root, "software", 0);
  fs_json_string(&root, "driver", kdrv);
  version_str(drv, 1000, vbuf, sizeof vbuf);
  fs_json_string(&root, "driver_cuda_version", vbuf);
  version_str(rt, 1000, vbuf, sizeof vbuf);
  fs_json_string(&root, "cuda_runtime", vbuf);
  version_str((int)cublasLtGetVersion(), 10000, vbuf, sizeof vbuf);
  fs_json_string(&root, "cublas", vbuf);
  int nv = fs_probe_nccl_version();
  if (nv > 0) {
    version_str(nv, 10000, vbuf, sizeof vbuf);
    fs_json_string(&root, "nccl", vbuf);
  } else {
    fs_json_string(&root, "nccl", NULL);
  }
  fs_json_object_end(&root);
  free(kdrv);

  fs_json_int(&root, "device_index", device);
  fs_json_array_begin(&root, "devices", 0);
  for (int d = 0; d < ndev; d++)
    write_device(&root, d);
  fs_json_array_end(&root);

  fs_json_object_begin(&root, "environment", 0);
  for (int i = 0; i < nextra; i++) {
    char key[128];
    size_t klen = strcspn(extra[i], "=");
    snprintf(key, sizeof key, "%.*s", (int)(klen < sizeof key ? klen : sizeof key - 1), extra[i]);
    fs_json_string(&root, key, extra[i] + klen + 1);
  }
  fs_json_object_end(&root);

  char *sbuf = NULL;
  size_t slen = 0;
  FILE *sf = open_memstream(&sbuf, &slen);
  if (!sf) {
    perror("open_memstream");
    return 1;
  }
  FsJson summary;
  fs_json_init(&summary, sf, 1);
  fs_json_object_begin(&summary, NULL, 0);
  ctx.out = &root;
  ctx.summary = &summary;

  double elapsed[NPROBES];
  fs_json_array_begin(&root, "measurements", 0);
  for (int i = 0; i < NPROBES; i++) {
    elapsed[i] = -1;
    if (!selected(only, probes[i].name))
      continue;
    fprintf(stderr, "probe %s: %s\n", probes[i].name, probes[i].help);
    double t0 = fs_now_us();
    probes[i].fn(&ctx);
    FS_CK(cudaSetDevice(device));
    FS_CK(cudaDeviceSynchronize());
    elapsed[i] = (fs_now_us() - t0) / 1e6;
    fprintf(stderr, "probe %s: done in %.1f s\n", probes[i].name, elapsed[i]);
  }
  fs_json_array_end(&root);

  fs_json_object_end(&summary);
  fclose(sf);
  while (slen > 0 && sbuf[slen - 1] == '\n')
    sbuf[--slen] = 0;
  fs_json_raw(&root, "summary", sbuf);

  fs_json_array_begin(&root, "skipped", 0);
  for (int i = 0; i < ctx.nskips; i++) {
    fs_json_object_begin(&root, NULL, 1);
    fs_json_string(&root, "probe", ctx.skip_probe[i]);
    fs_json_string(&root, "reason", ctx.skip_reason[i]);
    fs_json_object_end(&root);
    free(ctx.skip_probe[i]);
    free(ctx.skip_reason[i]);
  }
  fs_json_array_end(&root);

  fs_json_array_begin(&root, "probes_run", 0);
  for (int i = 0; i < NPROBES; i++) {
    if (elapsed[i] < 0)
      continue;
    fs_json_object_begin(&root, NULL, 1);
    fs_json_string(&root, "name", probes[i].name);
    fs_json_number(&root, "elapsed_s", elapsed[i]);
    fs_json_object_end(&root);
  }
  fs_json_array_end(&root);
  fs_json_object_end(&root);

  fprintf(stderr, "summary: %s\n", sbuf);
  free(sbuf);
  if (f != stdout) {
    if (ferror(f) | fclose(f)) {
      perror(tmp_path);
      return 1;
    }
    if (rename(tmp_path, out_path) != 0) {
      perror(out_path);
      return 1;
    }
    fprintf(stderr, "wrote %s\n", out_path);
  }
  return 0;
}
