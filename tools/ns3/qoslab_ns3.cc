// qoslab's ns-3 back end: one program for every scenario.
//
//   qoslab_ns3 scenario.json results.json
//
// scenario.json is written by python/qoslab/ns3 (export.py): the topology, every queue disc as
// an ns-3 TypeId with its attributes, every TCP socket's congestion and recovery TypeIds with
// its attributes and the defaults to set before it is created, every UDP source's process, the
// RNG seed and run, and the measurement window. All ns-3 settings are decided on the Python
// side (where they are unit-tested and documented); this program applies them as given and
// measures. It writes results.json with the same metrics as the ns-2 back end (see
// python/qoslab/ns3/__init__.py for their definitions):
//
//   {"seed", "flows": [{name, throughput_bps, delivered_packets, sent_packets,
//                       retransmitted_packets, [timeouts, fast_retransmits],
//                       [size_bytes, segments, start_s, end_s, fct_s]}],
//    "links": [{name, direction, arrivals, departures, drops, early_drops, forced_drops, marks,
//               reasons, window_drops, window_marks, window_admitted, window_wait_s,
//               mean_queue_delay_s}],
//    "total_drops", "packet_hops", "events"}
//
// Three classes of its own match qoslab's TCP where ns-3.37 differs (docs/validation/ns3.md):
// QoslabRttPerRound, QoslabNewReno and QoslabTcpSocket, below.
//
// Every link direction has a queue disc (the backlog) in front of a point-to-point device whose
// own transmit queue holds one packet. A packet's queueing delay is the time from its admission
// to the queue disc to the start of its transmission (PhyTxBegin), so it includes the wait in
// the device's one-packet queue, as qoslab's includes every wait before transmission.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <deque>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

using namespace ns3;
using json = nlohmann::json;

namespace ns3
{

// RFC 6298's estimator (ns-3's RttMeanDeviation) fed with at most one RTT sample per smoothed
// RTT, as qoslab's and ns-2's TCP time one segment per round trip (Karn/Jacobson). ns-3's
// TcpSocketBase samples every ACK: within a window the samples are alike, rttvar collapses,
// the RTO approaches srtt and the gaps between a window's ACK bursts fire spurious timeouts.
// Karn's rule for the handshake too: ns-3 samples the SYN's round trip even when the SYN was
// retransmitted (from the first SYN: 3 s and more, so an RTO of 9 s or more for the data);
// before any sample, one at least the initial RTO can only come from a retransmitted SYN (or
// first segment) and is not taken.
class QoslabRttPerRound : public RttMeanDeviation
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::QoslabRttPerRound")
                                .SetParent<RttMeanDeviation>()
                                .SetGroupName("Internet")
                                .AddConstructor<QoslabRttPerRound>();
        return tid;
    }

    QoslabRttPerRound() = default;

    QoslabRttPerRound(const QoslabRttPerRound& r)
        : RttMeanDeviation(r),
          m_last(r.m_last)
    {
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    void Measurement(Time m) override
    {
        Time now = Simulator::Now();
        if (m_nSamples > 0 && now < m_last + m_estimatedRtt)
        {
            return; // this round trip has been timed already
        }
        if (m_nSamples == 0 && m >= m_estimatedRtt)
        {
            return; // Karn: the segment timed was retransmitted (m_estimatedRtt is the initial RTO)
        }
        m_last = now;
        RttMeanDeviation::Measurement(m);
    }

    Ptr<RttEstimator> Copy() const override
    {
        return CopyObject<QoslabRttPerRound>(this);
    }

    void Reset() override
    {
        RttMeanDeviation::Reset();
        m_last = Time(0);
    }

  private:
    Time m_last{0};
};

NS_OBJECT_ENSURE_REGISTERED(QoslabRttPerRound);

// TcpNewReno whose loss response halves the congestion window, as qoslab's TCP (and ns-2's)
// and RFC 5681 (FlightSize: everything outstanding) do. ns-3's TcpNewReno halves its
// BytesInFlight, which with SACK (or ns-3's emulation of it from duplicate ACKs) is RFC 6675's
// pipe: the outstanding data less what was SACKed or marked lost, three or more segments below
// the window at a fast retransmit. Growth (slow start, congestion avoidance) is TcpNewReno's.
class QoslabNewReno : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::QoslabNewReno")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<QoslabNewReno>();
        return tid;
    }

    QoslabNewReno() = default;

    QoslabNewReno(const QoslabNewReno& r) = default;

    std::string GetName() const override
    {
        return "QoslabNewReno";
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t) override
    {
        return std::max(2 * tcb->m_segmentSize, tcb->m_cWnd.Get() / 2);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<QoslabNewReno>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(QoslabNewReno);

// A TCP sender socket that restarts its retransmission timer at a fast retransmit, as qoslab's
// TCP and ns-2's (`reset_rtx_timer` in dupack_action) do. ns-3.37 keeps the timer running from
// the last new ACK: with the minimum RTO of 200 ms and a round trip of 150 ms, the timer
// expires a few tens of milliseconds after the fast retransmit, before the retransmission can
// be acknowledged, and nearly every fast retransmit of a small window becomes a timeout.
class QoslabTcpSocket : public TcpSocketBase
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::QoslabTcpSocket")
                                .SetParent<TcpSocketBase>()
                                .SetGroupName("Internet")
                                .AddConstructor<QoslabTcpSocket>();
        return tid;
    }

    QoslabTcpSocket() = default;

    QoslabTcpSocket(const QoslabTcpSocket& s) = default;

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    bool restartOnFastRetransmit = true;

  protected:
    void ProcessAck(const SequenceNumber32& ackNumber,
                    bool scoreboardUpdated,
                    uint32_t currentDelivered,
                    const SequenceNumber32& oldHeadSequence) override
    {
        TcpSocketState::TcpCongState_t before = m_tcb->m_congState;
        TcpSocketBase::ProcessAck(ackNumber, scoreboardUpdated, currentDelivered, oldHeadSequence);
        if (restartOnFastRetransmit && before != TcpSocketState::CA_RECOVERY &&
            m_tcb->m_congState == TcpSocketState::CA_RECOVERY)
        {
            m_retxEvent.Cancel();
            m_retxEvent = Simulator::Schedule(m_rto, &QoslabTcpSocket::ReTxTimeout, this);
        }
    }

    Ptr<TcpSocketBase> Fork() override
    {
        return CopyObject<QoslabTcpSocket>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(QoslabTcpSocket);

// The sender's socket: TcpL4Protocol::CreateSocket's steps with QoslabTcpSocket.
Ptr<TcpSocketBase>
CreateSenderSocket(Ptr<Node> node, TypeId cc, TypeId rec, TypeId rtt, bool restart)
{
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    ObjectFactory rttFactory(rtt.GetName());
    ObjectFactory ccFactory(cc.GetName());
    ObjectFactory recFactory(rec.GetName());
    Ptr<QoslabTcpSocket> socket = CreateObject<QoslabTcpSocket>();
    socket->restartOnFastRetransmit = restart;
    socket->SetNode(node);
    socket->SetTcp(tcp);
    socket->SetRtt(rttFactory.Create<RttEstimator>());
    socket->SetCongestionControlAlgorithm(ccFactory.Create<TcpCongestionOps>());
    socket->SetRecoveryAlgorithm(recFactory.Create<TcpRecoveryOps>());
    tcp->AddSocket(socket);
    return socket;
}

} // namespace ns3

namespace
{

double
Now()
{
    return Simulator::Now().GetSeconds();
}

struct Window
{
    double start;
    double end;

    bool Inside(double t) const
    {
        return t >= start && t < end;
    }
};

Window g_window{0, 0};

// ---------------------------------------------------------------------------------------------
// Link directions: the queue disc's counters and the queueing delay.

struct Direction
{
    std::string link;
    std::string dir;
    std::vector<std::string> earlyReasons;
    uint64_t arrivals = 0;
    uint64_t departures = 0;
    uint64_t earlyDrops = 0;
    uint64_t forcedDrops = 0;
    uint64_t marks = 0;
    uint64_t windowDrops = 0; // drops inside the measurement window
    uint64_t windowMarks = 0;
    std::map<std::string, uint64_t> reasons; // drops and marks by ns-3's reason
    double windowWait = 0;
    // packets admitted inside the window that started their transmission, and their waits (as
    // qoslab's window_admitted and window_wait_ns: a packet still queued at the end has no wait)
    uint64_t windowAdmitted = 0;
    // packet uid -> admission times, oldest first (a retransmitted segment shares its uid with
    // the original, and both may be queued)
    std::unordered_map<uint64_t, std::deque<double>> admitted;

    bool Early(const char* reason) const
    {
        // substrings: a child queue disc's reason comes prefixed by its parent's
        std::string text(reason);
        for (const auto& r : earlyReasons)
        {
            if (text.find(r) != std::string::npos)
            {
                return true;
            }
        }
        return false;
    }

    void Enqueue(Ptr<const QueueDiscItem> item)
    {
        arrivals++;
        double t = Now();
        if (g_window.Inside(t))
        {
            admitted[item->GetPacket()->GetUid()].push_back(t);
        }
    }

    void DropBefore(Ptr<const QueueDiscItem>, const char* reason)
    {
        arrivals++;
        reasons[reason]++;
        (Early(reason) ? earlyDrops : forcedDrops)++;
        windowDrops += g_window.Inside(Now());
    }

    void DropAfter(Ptr<const QueueDiscItem> item, const char* reason)
    {
        // An admitted packet dropped at dequeue (CoDel's drops): it never starts transmission,
        // so it has no queueing delay.
        Forget(item->GetPacket()->GetUid());
        reasons[reason]++;
        (Early(reason) ? earlyDrops : forcedDrops)++;
        windowDrops += g_window.Inside(Now());
    }

    void Forget(uint64_t uid)
    {
        auto it = admitted.find(uid);
        if (it != admitted.end())
        {
            it->second.pop_front();
            if (it->second.empty())
            {
                admitted.erase(it);
            }
        }
    }

    void Mark(Ptr<const QueueDiscItem>, const char* reason)
    {
        reasons[reason]++;
        marks++;
        windowMarks += g_window.Inside(Now());
    }

    void TxBegin(Ptr<const Packet> p)
    {
        auto it = admitted.find(p->GetUid());
        if (it != admitted.end())
        {
            windowWait += Now() - it->second.front();
            windowAdmitted++;
            it->second.pop_front();
            if (it->second.empty())
            {
                admitted.erase(it);
            }
        }
    }

    void TxEnd(Ptr<const Packet>)
    {
        departures++;
    }
};

// ---------------------------------------------------------------------------------------------
// Flows.

struct Flow
{
    std::string name;
    bool tcp = true;
    uint16_t port = 0;
    uint32_t srcNode = 0;
    uint32_t dstNode = 0;
    double start = 0;
    double stop = -1;
    uint32_t packetSize = 0; // IP packet size of a full data packet
    uint32_t payload = 0;    // TCP segment size or UDP payload
    // finite transfers
    int64_t segments = -1;
    json sizeBytes;
    double end = NAN;
    // counters
    uint64_t windowBytes = 0;
    uint64_t delivered = 0;
    uint64_t sent = 0;
    uint64_t retransmitted = 0;
    uint64_t timeouts = 0;        // TCP: entries into CA_LOSS (retransmission timeouts)
    uint64_t fastRetransmits = 0; // TCP: entries into CA_RECOVERY
    uint32_t highestSent = 0; // TCP: highest sequence number sent + 1 (SYN excluded)
    bool anySent = false;
    // UDP source
    std::string process;
    double interval = 0;
    double onMean = 0;
    double offMean = 0;
    Ptr<ExponentialRandomVariable> gap;
    Ptr<ExponentialRandomVariable> onRv;
    Ptr<ExponentialRandomVariable> offRv;
    double onUntil = 0;
    // sockets
    Ptr<Socket> socket;
    Ptr<Socket> listener;
    Address peer;
    uint64_t toWrite = 0; // TCP: bytes the application still has to hand to the socket
    bool bulk = true;
};

std::vector<std::unique_ptr<Flow>> g_flows;
std::unordered_map<uint32_t, Flow*> g_tcpByPort;
std::unordered_map<uint32_t, Flow*> g_udpByPort;
uint64_t g_hops = 0;

void
CountDelivery(Flow* f, uint32_t ipBytes)
{
    f->delivered++;
    if (g_window.Inside(Now()))
    {
        f->windowBytes += ipBytes;
    }
}

// Packets delivered to a node's transport layer: data at a flow's receiver, ACKs at a TCP
// sender (the completion of a finite transfer).
void
LocalDeliver(uint32_t node, const Ipv4Header& h, Ptr<const Packet> p, uint32_t)
{
    uint32_t ipBytes = h.GetPayloadSize() + h.GetSerializedSize();
    if (h.GetProtocol() == 6)
    {
        TcpHeader th;
        p->PeekHeader(th);
        uint32_t payload = p->GetSize() - th.GetSerializedSize();
        auto fwd = g_tcpByPort.find(th.GetDestinationPort());
        if (fwd != g_tcpByPort.end() && fwd->second->dstNode == node)
        {
            if (payload > 0)
            {
                CountDelivery(fwd->second, ipBytes);
            }
            return;
        }
        auto rev = g_tcpByPort.find(th.GetSourcePort());
        if (rev != g_tcpByPort.end() && rev->second->srcNode == node)
        {
            Flow* f = rev->second;
            if (f->segments >= 0 && std::isnan(f->end) && (th.GetFlags() & TcpHeader::ACK))
            {
                // data starts at sequence number 1 (the SYN takes 0)
                uint64_t last = 1 + uint64_t(f->segments) * f->payload;
                if (uint64_t(th.GetAckNumber().GetValue()) >= last)
                {
                    f->end = Now();
                }
            }
        }
    }
    else if (h.GetProtocol() == 17)
    {
        UdpHeader uh;
        p->PeekHeader(uh);
        auto it = g_udpByPort.find(uh.GetDestinationPort());
        if (it != g_udpByPort.end() && it->second->dstNode == node)
        {
            CountDelivery(it->second, ipBytes);
        }
    }
}

// Packets a node originates: a flow's data packets (retransmissions included).
void
SendOutgoing(uint32_t node, const Ipv4Header& h, Ptr<const Packet> p, uint32_t)
{
    if (h.GetProtocol() == 6)
    {
        TcpHeader th;
        p->PeekHeader(th);
        auto it = g_tcpByPort.find(th.GetDestinationPort());
        if (it == g_tcpByPort.end() || it->second->srcNode != node)
        {
            return;
        }
        uint32_t payload = p->GetSize() - th.GetSerializedSize();
        if (payload == 0)
        {
            return;
        }
        Flow* f = it->second;
        f->sent++;
        uint32_t seq = th.GetSequenceNumber().GetValue();
        uint32_t endSeq = seq + payload;
        if (f->anySent && int32_t(endSeq - f->highestSent) <= 0)
        {
            f->retransmitted++;
        }
        else
        {
            f->highestSent = endSeq;
            f->anySent = true;
        }
    }
    else if (h.GetProtocol() == 17)
    {
        UdpHeader uh;
        p->PeekHeader(uh);
        auto it = g_udpByPort.find(uh.GetDestinationPort());
        if (it != g_udpByPort.end() && it->second->srcNode == node)
        {
            it->second->sent++;
        }
    }
}

// ---- TCP application: bulk (unbounded) or finite (segments * payload bytes) ------------------

void
TcpFill(Flow* f)
{
    if (f->stop >= 0 && Now() >= f->stop)
    {
        return;
    }
    // One packet per segment: every data packet is full size, and each has its own uid (TCP
    // cuts segments out of the application's packets, keeping their uid), which the queueing
    // delay measurement follows.
    while ((f->bulk || f->toWrite > 0) && f->socket->GetTxAvailable() >= f->payload)
    {
        if (f->socket->Send(Create<Packet>(f->payload)) <= 0)
        {
            return;
        }
        if (!f->bulk)
        {
            f->toWrite -= f->payload;
        }
    }
}

void
TcpConnected(Flow* f, Ptr<Socket>)
{
    TcpFill(f);
}

void
TcpConnectFailed(Flow* f, Ptr<Socket>)
{
    std::cerr << "flow " << f->name << ": connection failed\n";
}

void
TcpSpace(Flow* f, Ptr<Socket>, uint32_t)
{
    TcpFill(f);
}

void
TcpCongState(Flow* f, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_LOSS)
    {
        f->timeouts++;
    }
    else if (now == TcpSocketState::CA_RECOVERY)
    {
        f->fastRetransmits++;
    }
}

void
TcpStart(Flow* f)
{
    f->socket->Bind();
    f->socket->SetConnectCallback(MakeBoundCallback(&TcpConnected, f),
                                  MakeBoundCallback(&TcpConnectFailed, f));
    f->socket->SetSendCallback(MakeBoundCallback(&TcpSpace, f));
    f->socket->Connect(f->peer);
}

void
Drain(Ptr<Socket> s)
{
    while (Ptr<Packet> p = s->Recv())
    {
        if (p->GetSize() == 0)
        {
            break;
        }
    }
}

bool
AcceptAll(Ptr<Socket>, const Address&)
{
    return true;
}

void
Accepted(Ptr<Socket> s, const Address&)
{
    s->SetRecvCallback(MakeCallback(&Drain));
}

// ---- UDP application: cbr, poisson or onoff (exponential ON and OFF durations) -------------

void UdpSend(Flow* f);

void
UdpScheduleNext(Flow* f)
{
    double next;
    if (f->process == "poisson")
    {
        next = Now() + f->gap->GetValue();
    }
    else
    {
        next = Now() + f->interval;
        if (f->process == "onoff" && next >= f->onUntil)
        {
            // the ON period is over: an OFF period, then a new ON period starting with a packet
            double offEnd = f->onUntil + f->offRv->GetValue();
            f->onUntil = offEnd + f->onRv->GetValue();
            next = std::max(next, offEnd);
        }
    }
    if (f->stop >= 0 && next >= f->stop)
    {
        return;
    }
    Simulator::Schedule(Seconds(next - Now()), &UdpSend, f);
}

void
UdpSend(Flow* f)
{
    f->socket->Send(Create<Packet>(f->payload));
    UdpScheduleNext(f);
}

void
UdpStart(Flow* f)
{
    f->socket->Bind();
    f->socket->Connect(f->peer);
    if (f->process == "onoff")
    {
        f->onUntil = Now() + f->onRv->GetValue();
    }
    if (f->process == "poisson")
    {
        UdpScheduleNext(f); // the first packet one exponential gap after the start
    }
    else
    {
        UdpSend(f); // CBR and ON/OFF: the first packet at the start
    }
}

// ---------------------------------------------------------------------------------------------
// Building.

// Attributes as [name, value] strings; "@max" is Time::Max() (a Time attribute's "never", which
// no string spells exactly: ns-3 parses times through a double).
void
SetAll(ObjectBase* obj, const json& attrs)
{
    for (const auto& kv : attrs)
    {
        const std::string name = kv.at(0).get<std::string>();
        const std::string value = kv.at(1).get<std::string>();
        if (value == "@max")
        {
            obj->SetAttribute(name, TimeValue(Time::Max()));
        }
        else
        {
            obj->SetAttribute(name, StringValue(value));
        }
    }
}

void
SetDefaults(const json& defaults)
{
    for (const auto& kv : defaults)
    {
        Config::SetDefault(kv.at(0).get<std::string>(), StringValue(kv.at(1).get<std::string>()));
    }
}

json
DirectionResult(const Direction& d)
{
    json o;
    o["name"] = d.link;
    o["direction"] = d.dir;
    o["arrivals"] = d.arrivals;
    o["departures"] = d.departures;
    o["drops"] = d.earlyDrops + d.forcedDrops;
    o["early_drops"] = d.earlyDrops;
    o["forced_drops"] = d.forcedDrops;
    o["marks"] = d.marks;
    o["window_drops"] = d.windowDrops;
    o["window_marks"] = d.windowMarks;
    o["reasons"] = d.reasons;
    o["window_admitted"] = d.windowAdmitted;
    o["window_wait_s"] = d.windowWait;
    o["mean_queue_delay_s"] =
        d.windowAdmitted ? json(d.windowWait / double(d.windowAdmitted)) : json(nullptr);
    return o;
}

int
Main(const std::string& in, const std::string& out)
{
    std::ifstream is(in);
    if (!is)
    {
        std::cerr << "cannot read " << in << "\n";
        return 2;
    }
    json sc = json::parse(is);

    RngSeedManager::SetSeed(sc.at("rng_seed").get<uint32_t>());
    RngSeedManager::SetRun(sc.at("rng_run").get<uint64_t>());
    SetDefaults(sc.at("defaults"));
    g_window = {sc.at("window").at("start_s").get<double>(),
                sc.at("window").at("end_s").get<double>()};
    double duration = sc.at("duration_s").get<double>();

    std::map<std::string, Ptr<Node>> nodes;
    NodeContainer all;
    for (const auto& n : sc.at("nodes"))
    {
        Ptr<Node> node = CreateObject<Node>();
        nodes[n.get<std::string>()] = node;
        all.Add(node);
    }
    InternetStackHelper internet;
    internet.Install(all);

    // Links: devices, queue discs (before any address is assigned, so that no default queue
    // disc is installed), then one /30 per link.
    std::vector<std::unique_ptr<Direction>> dirs;
    std::vector<NetDeviceContainer> devices;
    int64_t stream = sc.at("first_stream").get<int64_t>();
    for (const auto& lk : sc.at("links"))
    {
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", StringValue(lk.at("data_rate").get<std::string>()));
        p2p.SetDeviceAttribute("Mtu", UintegerValue(lk.at("mtu").get<uint32_t>()));
        p2p.SetDeviceAttribute("InterframeGap", TimeValue(Seconds(0)));
        p2p.SetChannelAttribute("Delay", StringValue(lk.at("delay").get<std::string>()));
        p2p.SetQueue("ns3::DropTailQueue<Packet>",
                     "MaxSize",
                     StringValue(lk.at("device_queue").get<std::string>()));
        NetDeviceContainer dev =
            p2p.Install(nodes.at(lk.at("a").get<std::string>()), nodes.at(lk.at("b").get<std::string>()));
        devices.push_back(dev);
        const char* keys[2] = {"queue_ab", "queue_ba"};
        const char* names[2] = {"ab", "ba"};
        for (int i = 0; i < 2; i++)
        {
            const json& q = lk.at(keys[i]);
            TrafficControlHelper tch;
            tch.SetRootQueueDisc(q.at("type_id").get<std::string>());
            QueueDiscContainer qdc = tch.Install(dev.Get(i));
            Ptr<QueueDisc> qd = qdc.Get(0);
            SetAll(PeekPointer(qd), q.at("attributes"));
            if (Ptr<RedQueueDisc> red = DynamicCast<RedQueueDisc>(qd))
            {
                stream += red->AssignStreams(stream);
            }
            else if (Ptr<PieQueueDisc> pie = DynamicCast<PieQueueDisc>(qd))
            {
                stream += pie->AssignStreams(stream);
            }
            if (q.contains("quantum"))
            {
                // not an attribute in ns-3.37
                DynamicCast<FqCoDelQueueDisc>(qd)->SetQuantum(q.at("quantum").get<uint32_t>());
            }
            auto d = std::make_unique<Direction>();
            d->link = lk.at("name").get<std::string>();
            d->dir = names[i];
            for (const auto& r : q.at("early_drop_reasons"))
            {
                d->earlyReasons.push_back(r.get<std::string>());
            }
            Direction* dp = d.get();
            qd->TraceConnectWithoutContext("Enqueue", MakeCallback(&Direction::Enqueue, dp));
            qd->TraceConnectWithoutContext("DropBeforeEnqueue",
                                           MakeCallback(&Direction::DropBefore, dp));
            qd->TraceConnectWithoutContext("DropAfterDequeue",
                                           MakeCallback(&Direction::DropAfter, dp));
            qd->TraceConnectWithoutContext("Mark", MakeCallback(&Direction::Mark, dp));
            Ptr<NetDevice> nd = dev.Get(i);
            nd->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&Direction::TxBegin, dp));
            nd->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&Direction::TxEnd, dp));
            dirs.push_back(std::move(d));
        }
    }
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    std::map<std::string, Ipv4Address> firstAddress;
    for (size_t i = 0; i < devices.size(); i++)
    {
        Ipv4InterfaceContainer ifc = addr.Assign(devices[i]);
        addr.NewNetwork();
        const json& lk = sc.at("links").at(i);
        firstAddress.emplace(lk.at("a").get<std::string>(), ifc.GetAddress(0));
        firstAddress.emplace(lk.at("b").get<std::string>(), ifc.GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    for (auto& [name, node] : nodes)
    {
        Ptr<Ipv4L3Protocol> ip = node->GetObject<Ipv4L3Protocol>();
        ip->TraceConnectWithoutContext("LocalDeliver",
                                       MakeBoundCallback(&LocalDeliver, node->GetId()));
        ip->TraceConnectWithoutContext("SendOutgoing",
                                       MakeBoundCallback(&SendOutgoing, node->GetId()));
    }

    // Flows.
    for (const auto& fj : sc.at("flows"))
    {
        auto f = std::make_unique<Flow>();
        f->name = fj.at("name").get<std::string>();
        f->tcp = fj.at("kind").get<std::string>() == "tcp";
        f->port = fj.at("port").get<uint16_t>();
        Ptr<Node> src = nodes.at(fj.at("src").get<std::string>());
        Ptr<Node> dst = nodes.at(fj.at("dst").get<std::string>());
        f->srcNode = src->GetId();
        f->dstNode = dst->GetId();
        f->start = fj.at("start_s").get<double>();
        f->stop = fj.at("stop_s").is_null() ? -1.0 : fj.at("stop_s").get<double>();
        f->packetSize = fj.at("packet_size_bytes").get<uint32_t>();
        f->payload = fj.at("payload_bytes").get<uint32_t>();
        f->peer = InetSocketAddress(firstAddress.at(fj.at("dst").get<std::string>()), f->port);
        Flow* fp = f.get();
        if (f->tcp)
        {
            const json& t = fj.at("tcp");
            SetDefaults(t.at("defaults"));
            TypeId cc = TypeId::LookupByName(t.at("congestion").get<std::string>());
            TypeId rec = TypeId::LookupByName(t.at("recovery").get<std::string>());
            Ptr<TcpL4Protocol> dstTcp = dst->GetObject<TcpL4Protocol>();
            TypeId rtt = TypeId::LookupByName(t.at("rtt_estimator").get<std::string>());
            f->socket =
                CreateSenderSocket(src, cc, rec, rtt, t.at("restart_rto_on_fast_retransmit").get<bool>());
            SetAll(PeekPointer(f->socket), t.at("socket"));
            f->listener = dstTcp->CreateSocket(cc, rec);
            SetAll(PeekPointer(f->listener), t.at("socket"));
            DynamicCast<TcpSocketBase>(f->socket)->SetPacingStatus(t.at("pacing").get<bool>());
            f->socket->TraceConnectWithoutContext("CongState", MakeBoundCallback(&TcpCongState, fp));
            f->listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), f->port));
            f->listener->Listen();
            f->listener->SetAcceptCallback(MakeCallback(&AcceptAll), MakeCallback(&Accepted));
            if (!fj.at("segments").is_null())
            {
                f->segments = fj.at("segments").get<int64_t>();
                f->sizeBytes = fj.at("size_bytes");
                f->bulk = false;
                f->toWrite = uint64_t(f->segments) * f->payload;
            }
            g_tcpByPort[f->port] = fp;
            Simulator::Schedule(Seconds(f->start), &TcpStart, fp);
        }
        else
        {
            const json& u = fj.at("udp");
            f->process = u.at("process").get<std::string>();
            f->interval = u.at("interval_s").get<double>();
            if (f->process == "poisson")
            {
                f->gap = CreateObject<ExponentialRandomVariable>();
                f->gap->SetAttribute("Mean", DoubleValue(f->interval));
                f->gap->SetAttribute("Bound", DoubleValue(0));
                f->gap->SetStream(stream++);
            }
            else if (f->process == "onoff")
            {
                f->onRv = CreateObject<ExponentialRandomVariable>();
                f->onRv->SetAttribute("Mean", DoubleValue(u.at("on_s").get<double>()));
                f->onRv->SetAttribute("Bound", DoubleValue(0));
                f->offRv = CreateObject<ExponentialRandomVariable>();
                f->offRv->SetAttribute("Mean", DoubleValue(u.at("off_s").get<double>()));
                f->offRv->SetAttribute("Bound", DoubleValue(0));
                f->onRv->SetStream(stream++);
                f->offRv->SetStream(stream++);
            }
            f->socket = Socket::CreateSocket(src, UdpSocketFactory::GetTypeId());
            f->listener = Socket::CreateSocket(dst, UdpSocketFactory::GetTypeId());
            f->listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), f->port));
            f->listener->SetRecvCallback(MakeCallback(&Drain));
            g_udpByPort[f->port] = fp;
            Simulator::Schedule(Seconds(f->start), &UdpStart, fp);
        }
        g_flows.push_back(std::move(f));
    }

    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    json res;
    res["seed"] = sc.at("seed");
    res["flows"] = json::array();
    double window = g_window.end - g_window.start;
    for (const auto& f : g_flows)
    {
        json o;
        o["name"] = f->name;
        o["throughput_bps"] = window > 0 ? double(f->windowBytes) * 8.0 / window : 0.0;
        o["delivered_packets"] = f->delivered;
        o["sent_packets"] = f->sent;
        o["retransmitted_packets"] = f->retransmitted;
        if (f->tcp)
        {
            o["timeouts"] = f->timeouts;
            o["fast_retransmits"] = f->fastRetransmits;
        }
        if (f->segments >= 0)
        {
            o["size_bytes"] = f->sizeBytes;
            o["segments"] = f->segments;
            o["start_s"] = f->start;
            o["end_s"] = std::isnan(f->end) ? json(nullptr) : json(f->end);
            o["fct_s"] = std::isnan(f->end) ? json(nullptr) : json(f->end - f->start);
        }
        res["flows"].push_back(o);
    }
    res["links"] = json::array();
    uint64_t drops = 0;
    for (const auto& d : dirs)
    {
        res["links"].push_back(DirectionResult(*d));
        drops += d->earlyDrops + d->forcedDrops;
        g_hops += d->departures;
    }
    res["total_drops"] = drops;
    res["packet_hops"] = g_hops;
    res["events"] = Simulator::GetEventCount();
    Simulator::Destroy();

    std::ofstream os(out);
    os << res.dump(1) << "\n";
    if (!os)
    {
        std::cerr << "cannot write " << out << "\n";
        return 2;
    }
    return 0;
}

} // namespace

int
main(int argc, char** argv)
{
    if (argc != 3)
    {
        std::cerr << "usage: " << argv[0] << " scenario.json results.json\n";
        return 2;
    }
    try
    {
        return Main(argv[1], argv[2]);
    }
    catch (const std::exception& e)
    {
        std::cerr << "qoslab_ns3: " << e.what() << "\n";
        return 2;
    }
}
