/* topo-models.h — hand-made catalog models for the topo tests that must
 * not depend on the models/ data (paths, generators).  Figures are round
 * numbers for arithmetic, not hardware data. */
#pragma once

#include "catalog/catalog.h"

typedef struct {
  FsModel gpu, cpu, nic, nvlink, pcie, ib, upi, c2c, nvswitch, pcisw, ibsw, ibsw64;
} TestModels;

static inline void test_models_init(TestModels *m)
{
  *m = (TestModels){0};
  m->nvlink = (FsModel){.kind = FS_MODEL_LINK, .name = "t-nvlink", .source = "test"};
  m->nvlink.u.link = (FsLinkModel){.family = FS_LINK_NVLINK, .bandwidth = 25e9,
                                   .raw_bandwidth = 25e9, .latency = 100000};
  m->pcie = (FsModel){.kind = FS_MODEL_LINK, .name = "t-pcie", .source = "test"};
  m->pcie.u.link = (FsLinkModel){.family = FS_LINK_PCIE, .bandwidth = 32e9,
                                 .raw_bandwidth = 32e9, .latency = 200000};
  m->ib = (FsModel){.kind = FS_MODEL_LINK, .name = "t-ib", .source = "test"};
  m->ib.u.link = (FsLinkModel){.family = FS_LINK_INFINIBAND, .bandwidth = 50e9,
                               .raw_bandwidth = 50e9, .latency = 500000};
  m->upi = (FsModel){.kind = FS_MODEL_LINK, .name = "t-upi", .source = "test"};
  m->upi.u.link = (FsLinkModel){.family = FS_LINK_INTERSOCKET, .bandwidth = 20e9,
                                .raw_bandwidth = 20e9, .latency = 100000};
  m->c2c = (FsModel){.kind = FS_MODEL_LINK, .name = "t-c2c", .source = "test"};
  m->c2c.u.link = (FsLinkModel){.family = FS_LINK_C2C, .bandwidth = 450e9,
                                .raw_bandwidth = 450e9, .latency = 100000};
  m->gpu = (FsModel){.kind = FS_MODEL_GPU, .name = "t-gpu", .source = "test"};
  m->gpu.u.gpu.nvlinks = 18;
  m->gpu.u.gpu.nvlink = &m->nvlink;
  m->cpu = (FsModel){.kind = FS_MODEL_CPU, .name = "t-cpu", .source = "test"};
  m->nic = (FsModel){.kind = FS_MODEL_NIC, .name = "t-nic", .source = "test"};
  m->nic.u.nic.ports = 1;
  m->nic.u.nic.latency = 1000000;
  m->nvswitch = (FsModel){.kind = FS_MODEL_SWITCH, .name = "t-nvswitch", .source = "test"};
  m->nvswitch.u.sw = (FsSwitchModel){.kind = FS_SWITCH_NVSWITCH, .ports = 64, .latency = 300000};
  m->pcisw = (FsModel){.kind = FS_MODEL_SWITCH, .name = "t-pcisw", .source = "test"};
  m->pcisw.u.sw = (FsSwitchModel){.kind = FS_SWITCH_PCIE, .ports = 8, .latency = 150000};
  m->ibsw = (FsModel){.kind = FS_MODEL_SWITCH, .name = "t-ibsw", .source = "test"};
  m->ibsw.u.sw = (FsSwitchModel){.kind = FS_SWITCH_INFINIBAND, .ports = 4, .latency = 200000};
  m->ibsw64 = m->ibsw;
  m->ibsw64.name = "t-ibsw64";
  m->ibsw64.u.sw.ports = 64;
}
