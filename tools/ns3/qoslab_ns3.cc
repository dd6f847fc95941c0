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
// Classes of its own, below, match qoslab's TCP where ns-3.37 differs from it (QoslabRttPerRound,
// QoslabNewReno, QoslabTcpSocket's timer restart at a fast retransmit) or where ns-3.37 departs
// from the RFCs or Linux (QoslabCubic, QoslabDctcp, QoslabRateLinux, QoslabTcpSocket's other
// switches) or has no counterpart of a qoslab queue (QoslabStepQueueDisc); each is documented
// where it is defined and in docs/validation/ns3.md. The optional keys of a flow's "tcp" object
// (karn_backoff, loss_exit_increase, stop_idle_rto_timer, raw_rtt_sample, linux_rate_estimator)
// switch QoslabTcpSocket's corrections; absent, ns-3.37's behaviour.
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

// TcpCubic with RFC 9438's Reno-friendly region (section 4.3), which ns-3.37's TcpCubic lacks
// and Linux's CUBIC (tcp_friendliness) and qoslab's have. W_est starts at the window of the
// epoch's first congestion-avoidance ACK and grows by alpha * acked / cwnd per ACK, alpha =
// 3 (1 - beta) / (1 + beta) until W_est reaches the window at the last congestion event
// (cwnd_prior), 1 after; while the cubic window is below W_est, cwnd = W_est (whole segments:
// TcpCubic counts the window in segments). The cubic growth itself, HyStart, the multiplicative
// decrease and the timeout's reset are TcpCubic's.
class QoslabCubic : public TcpCubic
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::QoslabCubic")
                                .SetParent<TcpCubic>()
                                .SetGroupName("Internet")
                                .AddConstructor<QoslabCubic>();
        return tid;
    }

    QoslabCubic() = default;

    QoslabCubic(const QoslabCubic& r) = default;

    std::string GetName() const override
    {
        return "QoslabCubic";
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        // TcpCubic spends a slow-start ACK's segments in slow start (none on congestion
        // avoidance, even when the window passes ssthresh): so does W_est
        bool slowStart = tcb->m_cWnd < tcb->m_ssThresh;
        uint32_t cwnd = tcb->GetCwndInSegments();
        TcpCubic::IncreaseWindow(tcb, segmentsAcked);
        if (slowStart || segmentsAcked == 0 || cwnd == 0)
        {
            return;
        }
        if (!m_epoch)
        {
            m_epoch = true;
            m_wEst = cwnd;
        }
        double beta = Beta();
        double alpha = m_wEst >= m_cwndPrior ? 1.0 : 3.0 * (1.0 - beta) / (1.0 + beta);
        m_wEst += alpha * segmentsAcked / cwnd;
        uint32_t est = static_cast<uint32_t>(m_wEst);
        if (est > tcb->GetCwndInSegments())
        {
            tcb->m_cWnd = est * tcb->m_segmentSize;
        }
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        // a congestion event (fast retransmit, ECN, timeout): a new epoch follows
        m_cwndPrior = tcb->GetCwndInSegments();
        m_epoch = false;
        return TcpCubic::GetSsThresh(tcb, bytesInFlight);
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState == TcpSocketState::CA_LOSS)
        {
            m_epoch = false;
        }
        TcpCubic::CongestionStateSet(tcb, newState);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<QoslabCubic>(this);
    }

  private:
    double Beta() const
    {
        DoubleValue v;
        GetAttribute("Beta", v);
        return v.Get();
    }

    bool m_epoch{false};     // inside a congestion-avoidance epoch (W_est valid)
    double m_wEst{0};        // W_est, segments
    double m_cwndPrior{0};   // the window at the last congestion event, segments
};

NS_OBJECT_ENSURE_REGISTERED(QoslabCubic);

// TcpDctcp whose reduction keeps at least two segments, as Linux's dctcp_ssthresh (max(cwnd -
// cwnd * alpha / 2, 2)) and qoslab's DCTCP. ns-3.37's TcpDctcp has no floor: one ECN-Echo with
// alpha = 1 and a window of one segment leaves half a segment, too little to send anything,
// and the flow waits for a timer (it stalled for good once the retransmission timer stops when
// nothing is outstanding, RFC 6298 5.2: dumbbell-5-step-dctcp seed 3, two flows of five).
class QoslabDctcp : public TcpDctcp
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::QoslabDctcp")
                                .SetParent<TcpDctcp>()
                                .SetGroupName("Internet")
                                .AddConstructor<QoslabDctcp>();
        return tid;
    }

    QoslabDctcp() = default;

    QoslabDctcp(const QoslabDctcp& r) = default;

    std::string GetName() const override
    {
        return "QoslabDctcp";
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        return std::max(2 * tcb->m_segmentSize, TcpDctcp::GetSsThresh(tcb, bytesInFlight));
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<QoslabDctcp>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(QoslabDctcp);

// qoslab's `step` queue (DCTCP's switch, RFC 8257 section 3.1): a FIFO that marks an
// ECN-capable arrival Congestion Experienced while more than Threshold waits, and tail-drops
// at MaxSize; a packet that is not ECN-capable is never dropped early. ns-3's RED with MinTh =
// MaxTh = K marks alike but drops the packets it cannot mark, which under DCTCP mixed with a
// TCP without ECN drops the latter at K instead of at the limit.
class QoslabStepQueueDisc : public FifoQueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("ns3::QoslabStepQueueDisc")
                .SetParent<FifoQueueDisc>()
                .SetGroupName("TrafficControl")
                .AddConstructor<QoslabStepQueueDisc>()
                .AddAttribute("Threshold",
                              "K: ECN-capable arrivals are marked while more than this waits",
                              QueueSizeValue(QueueSize("20p")),
                              MakeQueueSizeAccessor(&QoslabStepQueueDisc::m_threshold),
                              MakeQueueSizeChecker());
        return tid;
    }

    static constexpr const char* STEP_MARK = "Step mark";

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        if (GetCurrentSize() + item > GetMaxSize())
        {
            DropBeforeEnqueue(item, LIMIT_EXCEEDED_DROP);
            return false;
        }
        uint32_t waiting = m_threshold.GetUnit() == QueueSizeUnit::PACKETS ? GetNPackets()
                                                                           : GetNBytes();
        if (waiting > m_threshold.GetValue())
        {
            Mark(item, STEP_MARK); // false, and nothing done, when the packet is not ECT
        }
        return GetInternalQueue(0)->Enqueue(item);
    }

    QueueSize m_threshold;
};

NS_OBJECT_ENSURE_REGISTERED(QoslabStepQueueDisc);

// Linux's delivery-rate estimator (net/ipv4/tcp_rate.c), which BBR's bandwidth filter is fed
// with, in place of ns-3.37's TcpRateLinux. Two differences from ns-3.37's (both fixed in later
// ns-3): its ACK phase is measured from the *previous* sample's delivered time instead of this
// sample's (ns-3 issue 1026: `m_ackElapsed = Now - m_priorTime` before m_priorTime is updated),
// and its sample persists from ACK to ACK, so an invalid sample (no packet delivered, or an
// interval shorter than the minimum RTT) or a lower application-limited one carries the
// previous delivery rate, which TcpBbr takes as a new one (ns-3 issue 735). Here, as in Linux,
// every ACK starts a fresh sample, and an invalid one has a delivery rate of 0, which TcpBbr
// ignores.
class QoslabRateLinux : public TcpRateOps
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::QoslabRateLinux")
                                .SetParent<TcpRateOps>()
                                .SetGroupName("Internet")
                                .AddConstructor<QoslabRateLinux>();
        return tid;
    }

    void SkbSent(TcpTxItem* skb, bool isStartOfTransmission) override
    {
        TcpTxItem::RateInformation& info = skb->GetRateInformation();
        if (isStartOfTransmission)
        {
            // nothing in flight: the sampling interval starts now (tcp_rate_skb_sent)
            m_rate.m_firstSentTime = Simulator::Now();
            m_rate.m_deliveredTime = Simulator::Now();
        }
        info.m_firstSent = m_rate.m_firstSentTime;
        info.m_deliveredTime = m_rate.m_deliveredTime;
        info.m_isAppLimited = m_rate.m_appLimited != 0;
        info.m_delivered = m_rate.m_delivered;
    }

    void SkbDelivered(TcpTxItem* skb) override
    {
        TcpTxItem::RateInformation& info = skb->GetRateInformation();
        if (info.m_deliveredTime == Time::Max())
        {
            return; // counted already (SACKed before this cumulative ACK)
        }
        m_rate.m_delivered += skb->GetSeqSize();
        m_rate.m_deliveredTime = Simulator::Now();
        // tcp_rate_skb_delivered: the most recently sent packet of the ACK gives the sample
        if (!m_hasPrior || info.m_delivered > m_priorDelivered)
        {
            m_hasPrior = true;
            m_priorDelivered = info.m_delivered;
            m_rs.m_priorDelivered = static_cast<uint32_t>(info.m_delivered);
            m_rs.m_priorTime = info.m_deliveredTime;
            m_rs.m_isAppLimited = info.m_isAppLimited;
            m_rs.m_sendElapsed = skb->GetLastSent() - info.m_firstSent;
            m_rate.m_firstSentTime = skb->GetLastSent();
        }
        info.m_deliveredTime = Time::Max();
        m_rate.m_txItemDelivered = static_cast<uint32_t>(info.m_delivered);
    }

    void CalculateAppLimited(uint32_t cWnd,
                             uint32_t inFlight,
                             uint32_t segmentSize,
                             const SequenceNumber32& tailSeq,
                             const SequenceNumber32& nextTx,
                             const uint32_t lostOut,
                             const uint32_t retransOut) override
    {
        // tcp_rate_check_app_limited (as ns-3.37's): less than a segment to send, the window
        // not full, every lost packet retransmitted
        if (tailSeq - nextTx < static_cast<int32_t>(segmentSize) && inFlight < cWnd &&
            lostOut <= retransOut)
        {
            m_rate.m_appLimited = std::max<uint32_t>(m_rate.m_delivered + inFlight, 1);
        }
    }

    const TcpRateSample& GenerateSample(uint32_t delivered,
                                        uint32_t lost,
                                        bool isSackReneg,
                                        uint32_t priorInFlight,
                                        const Time& minRtt) override
    {
        // tcp_rate_gen
        if (m_rate.m_appLimited != 0 && m_rate.m_delivered > m_rate.m_appLimited)
        {
            m_rate.m_appLimited = 0;
        }
        m_out = m_rs;
        bool hasPrior = m_hasPrior;
        uint64_t priorDelivered = m_priorDelivered;
        m_rs = TcpRateSample();
        m_hasPrior = false;
        m_out.m_ackedSacked = delivered;
        m_out.m_bytesLoss = lost;
        m_out.m_priorInFlight = priorInFlight;
        m_out.m_deliveryRate = DataRate(0);
        if (!hasPrior || isSackReneg)
        {
            m_out.m_delivered = -1;
            m_out.m_interval = Seconds(0);
            return m_out;
        }
        m_out.m_ackElapsed = Simulator::Now() - m_out.m_priorTime;
        m_out.m_interval = std::max(m_out.m_sendElapsed, m_out.m_ackElapsed);
        m_out.m_delivered = static_cast<int32_t>(m_rate.m_delivered - priorDelivered);
        if (m_out.m_interval < minRtt || m_out.m_interval.IsZero())
        {
            m_out.m_interval = Seconds(0); // invalid (tcp_rate_gen's interval_us = -1)
            return m_out;
        }
        if (!m_out.m_isAppLimited || (int64_t(m_out.m_delivered) * m_rate.m_rateInterval.GetNanoSeconds() >=
                                      int64_t(m_rate.m_rateDelivered) * m_out.m_interval.GetNanoSeconds()))
        {
            m_rate.m_rateDelivered = m_out.m_delivered;
            m_rate.m_rateInterval = m_out.m_interval;
            m_rate.m_rateAppLimited = m_out.m_isAppLimited;
        }
        // the sample's rate, application-limited or not (BBR decides: bbr_update_bw)
        m_out.m_deliveryRate = DataRate(m_out.m_delivered * 8.0 / m_out.m_interval.GetSeconds());
        return m_out;
    }

    const TcpRateConnection& GetConnectionRate() override
    {
        return m_rate;
    }

  private:
    TcpRateConnection m_rate;
    TcpRateSample m_rs;        // this ACK's sample, being built
    TcpRateSample m_out;       // the last sample generated
    bool m_hasPrior{false};    // this ACK delivered a packet with rate information
    uint64_t m_priorDelivered{0};
};

NS_OBJECT_ENSURE_REGISTERED(QoslabRateLinux);

// The sender's socket: TcpSocketBase with these differences, each switched by the scenario's
// JSON (docs/validation/ns3.md):
//
// * restartOnFastRetransmit: the retransmission timer restarts at a fast retransmit, as
//   qoslab's TCP and ns-2's (`reset_rtx_timer` in dupack_action) do. ns-3.37 keeps it running
//   from the last new ACK: with the minimum RTO of 200 ms and a round trip of 150 ms, the timer
//   expires a few tens of milliseconds after the fast retransmit, before the retransmission can
//   be acknowledged, and nearly every fast retransmit of a small window becomes a timeout.
// * rawRttSample: the congestion control sees each ACK's RTT sample (TcpSocketState's
//   m_lastRtt, "last RTT sample collected") and the minimum of those samples (m_minRtt), as
//   Linux gives them to BBR and CUBIC (rs->rtt_us, tcp_min_rtt). ns-3.37 stores the *smoothed*
//   RTT in both (fixed in later ns-3: issue 1043), so TcpBbr's RTprop is a minimum of srtt and
//   TcpCubic's delay_min and HyStart read srtt. The RTO estimator is not affected.
// * stopIdleTimer: RFC 6298 (5.2), "when all outstanding data has been acknowledged, turn off
//   the retransmission timer"; the next segment sent starts it (5.1). ns-3.37 turns it off only
//   when the send buffer is empty, so a paced sender with data waiting in its buffer and
//   nothing in flight times out RTO after the last ACK, however recently the next segment
//   left.
// * keepBackoff: Karn's algorithm as RFC 6298 (5.5, 5.7) and Linux (icsk_backoff) apply it: the
//   RTO doubled by a timeout stays doubled until an RTT sample is taken, i.e. until a segment
//   that was not retransmitted is acknowledged. ns-3.37 recomputes the RTO from the estimator
//   at every new ACK, so the ACK of the retransmission itself collapses the backoff, and after
//   repeated losses of the same segment the sender retransmits every 200 ms, not at 0.2, 0.4,
//   0.8 s...
// * lossExitIncrease: RFC 5681 (3.1) slow start after a timeout, "cwnd incremented by at most
//   SMSS for each ACK that cumulatively acknowledges new data". When the first ACK after a
//   timeout's retransmission acknowledges everything up to the recovery point (one lost
//   segment, the others received), ns-3.37 leaves CA_LOSS passing the congestion control only
//   the segments acknowledged above the recovery point, none: the window stays at one segment
//   for another round trip. Here that ACK grows the window as any other.
// * linuxRate: QoslabRateLinux (above) estimates the delivery rate.
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
    bool rawRttSample = false;
    bool stopIdleTimer = false;
    bool keepBackoff = false;
    bool lossExitIncrease = false;

    void UseLinuxRateEstimator()
    {
        m_rateOps = CreateObject<QoslabRateLinux>();
    }

  protected:
    void ProcessAck(const SequenceNumber32& ackNumber,
                    bool scoreboardUpdated,
                    uint32_t currentDelivered,
                    const SequenceNumber32& oldHeadSequence) override
    {
        TcpSocketState::TcpCongState_t before = m_tcb->m_congState;
        SequenceNumber32 recover = m_recover;
        TcpSocketBase::ProcessAck(ackNumber, scoreboardUpdated, currentDelivered, oldHeadSequence);
        if (restartOnFastRetransmit && before != TcpSocketState::CA_RECOVERY &&
            m_tcb->m_congState == TcpSocketState::CA_RECOVERY)
        {
            m_retxEvent.Cancel();
            m_retxEvent = Simulator::Schedule(m_rto, &QoslabTcpSocket::ReTxTimeout, this);
        }
        if (lossExitIncrease && before == TcpSocketState::CA_LOSS &&
            m_tcb->m_congState == TcpSocketState::CA_OPEN && ackNumber >= recover &&
            ackNumber - recover < static_cast<int32_t>(m_tcb->m_segmentSize) &&
            !m_congestionControl->HasCongControl())
        {
            // TcpSocketBase passed the congestion control only the segments above the
            // recovery point, none here: this ACK's segments below it were never counted
            uint32_t acked = (ackNumber - oldHeadSequence) / m_tcb->m_segmentSize;
            if (acked > 0)
            {
                m_congestionControl->IncreaseWindow(m_tcb, acked);
                m_tcb->m_cWndInfl = m_tcb->m_cWnd;
            }
        }
    }

    void EstimateRtt(const TcpHeader& tcpHeader) override
    {
        // TcpSocketBase::EstimateRtt's sample (timestamps are off): the oldest segment in the
        // history, if this ACK covers it and it was not retransmitted (Karn)
        Time m(0);
        if (!m_history.empty())
        {
            const RttHistory& h = m_history.front();
            if (!h.retx && tcpHeader.GetAckNumber() >= h.seq + SequenceNumber32(h.count))
            {
                m = Simulator::Now() - h.time;
            }
        }
        TcpSocketBase::EstimateRtt(tcpHeader);
        if (m.IsZero())
        {
            return;
        }
        m_backedOff = false; // an RTT sample: the RTO is computed afresh (RFC 6298 5.7)
        if (rawRttSample)
        {
            m_minRawRtt = std::min(m_minRawRtt, m);
            m_tcb->m_lastRtt = m;
            m_tcb->m_minRtt = m_minRawRtt;
        }
    }

    void ReTxTimeout() override
    {
        Time before = m_rto.Get();
        TcpSocketBase::ReTxTimeout();
        if (m_rto.Get() > before)
        {
            m_backedOff = true;
        }
    }

    void NewAck(const SequenceNumber32& seq, bool resetRTO) override
    {
        Time rto = m_rto.Get();
        TcpSocketBase::NewAck(seq, resetRTO);
        if (keepBackoff && m_backedOff && resetRTO && m_state != TcpSocket::SYN_RCVD)
        {
            // the base class recomputed the RTO from the estimator: keep the backed-off one
            m_rto = rto;
            m_retxEvent.Cancel();
            m_retxEvent = Simulator::Schedule(m_rto, &QoslabTcpSocket::ReTxTimeout, this);
        }
        if (stopIdleTimer && m_state == TcpSocket::ESTABLISHED && seq >= m_tcb->m_highTxMark.Get())
        {
            m_retxEvent.Cancel();
        }
    }

    Ptr<TcpSocketBase> Fork() override
    {
        return CopyObject<QoslabTcpSocket>(this);
    }

  private:
    Time m_minRawRtt{Time::Max()};
    bool m_backedOff{false}; // a timeout doubled the RTO and no RTT sample has been taken since
};

NS_OBJECT_ENSURE_REGISTERED(QoslabTcpSocket);

// The sender's socket: TcpL4Protocol::CreateSocket's steps with QoslabTcpSocket.
Ptr<TcpSocketBase>
CreateSenderSocket(Ptr<Node> node, TypeId cc, TypeId rec, TypeId rtt, const json& t)
{
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    ObjectFactory rttFactory(rtt.GetName());
    ObjectFactory ccFactory(cc.GetName());
    ObjectFactory recFactory(rec.GetName());
    Ptr<QoslabTcpSocket> socket = CreateObject<QoslabTcpSocket>();
    socket->restartOnFastRetransmit = t.at("restart_rto_on_fast_retransmit").get<bool>();
    // optional keys (absent: ns-3.37's behaviour)
    socket->rawRttSample = t.value("raw_rtt_sample", false);
    socket->stopIdleTimer = t.value("stop_idle_rto_timer", false);
    socket->keepBackoff = t.value("karn_backoff", false);
    socket->lossExitIncrease = t.value("loss_exit_increase", false);
    if (t.value("linux_rate_estimator", false))
    {
        socket->UseLinuxRateEstimator();
    }
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
            f->socket = CreateSenderSocket(src, cc, rec, rtt, t);
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
